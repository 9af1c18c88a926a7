/**
 * The experimental resource routes (files, the media endpoints in media-routes.ts, and the
 * not-served async invocations and rerank); batches and responses register their own. One registration for app.ts; the use cases are built
 * in startup/compose.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { FilesService } from '../experimental/files/files-service.js';
import type { MediaService } from '../experimental/media/media-service.js';
import type { Authenticator } from './auth.js';
import { registerFilesRoutes } from './files-routes.js';
import { registerMediaRoutes } from './media-routes.js';
import { registerNotServedRoutes } from './not-served-routes.js';

export interface ResourceRouteDeps {
  authenticator: Authenticator;
  files: FilesService;
  media: MediaService;
  maxUploadBytes: number;
}

export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRouteDeps): void {
  registerFilesRoutes(app, deps);
  registerMediaRoutes(app, deps);
  registerNotServedRoutes(app, deps);
}
