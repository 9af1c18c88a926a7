/**
 * The experimental resource routes (files, speech, transcriptions, images, moderations, and the
 * not-served async invocations and rerank), with the use cases they call. One registration for
 * app.ts; the object store defaults to the configured local folder (without a sealing key: the
 * composition root passes a store built by openObjectStore when sealing is configured).
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { FilesService } from '../experimental/files/files-service.js';
import { SideEndpointsService } from '../experimental/media/side-endpoints-service.js';
import type { Upstreams } from '../gateway/connections.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { LocalFolderObjectStore } from '../objects/local-folder.js';
import { objectsFolder } from '../objects/open-objects.js';
import type { ObjectStore } from '../objects/port.js';
import type { Store } from '../store/port.js';
import type { Authenticator } from './auth.js';
import { registerFilesRoutes } from './files-routes.js';
import { registerNotServedRoutes } from './not-served-routes.js';
import { registerSideEndpointRoutes } from './side-endpoint-routes.js';

export interface ResourceRouteDeps {
  config: Config;
  store: Store;
  clock: Clock;
  upstreams: Upstreams;
  ledger: Ledger;
  objects?: ObjectStore;
  authenticator: Authenticator;
}

export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRouteDeps): void {
  const objects = deps.objects ?? new LocalFolderObjectStore({ root: objectsFolder(deps.config) });
  const maxUploadBytes = deps.config.objects.max_upload_bytes;
  const files = new FilesService({
    config: deps.config,
    store: deps.store,
    objects,
    upstreams: deps.upstreams,
    clock: deps.clock,
  });
  const side = new SideEndpointsService({
    config: deps.config,
    upstreams: deps.upstreams,
    ledger: deps.ledger,
    objects,
  });
  registerFilesRoutes(app, { authenticator: deps.authenticator, files, maxUploadBytes });
  registerSideEndpointRoutes(app, { authenticator: deps.authenticator, side, maxUploadBytes });
  registerNotServedRoutes(app, { authenticator: deps.authenticator });
}
