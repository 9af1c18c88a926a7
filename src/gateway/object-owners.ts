/** Every feature that keeps objects, as sweep owners (objects/sweep.ts). Add a feature's owner here. */
import type { ObjectOwner } from '../objects/sweep.js';
import { type FilesDeps, FilesService } from './files-service.js';
import { SideEndpointsService } from './side-endpoints-service.js';

export function objectOwners(deps: FilesDeps): ObjectOwner[] {
  return [new FilesService(deps).sweepOwner(), SideEndpointsService.sweepOwner()];
}
