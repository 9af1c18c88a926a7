/**
 * The experimental resource routes (files, speech, transcriptions, images, moderations, and the
 * not-served async invocations and rerank). One registration for app.ts; the use cases are built
 * in startup/compose.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { FilesService } from '../experimental/files/files-service.js';
import type { SideEndpointsService } from '../experimental/media/side-endpoints-service.js';
import type { Authenticator } from './auth.js';
import { registerFilesRoutes } from './files-routes.js';
import { registerNotServedRoutes } from './not-served-routes.js';
import { registerSideEndpointRoutes } from './side-endpoint-routes.js';

export interface ResourceRouteDeps {
  authenticator: Authenticator;
  files: FilesService;
  side: SideEndpointsService;
  maxUploadBytes: number;
}

export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRouteDeps): void {
  registerFilesRoutes(app, deps);
  registerSideEndpointRoutes(app, deps);
  registerNotServedRoutes(app, deps);
}
