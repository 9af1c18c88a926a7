/** Every feature that keeps objects, as sweep owners (objects/sweep.ts). Add a feature's owner here. */

import { type FilesDeps, FilesService } from '../experimental/files/files-service.js';
import { SideEndpointsService } from '../experimental/media/side-endpoints-service.js';
import type { ObjectOwner } from '../objects/sweep.js';

export function objectOwners(deps: FilesDeps): ObjectOwner[] {
  return [new FilesService(deps).sweepOwner(), SideEndpointsService.sweepOwner()];
}
