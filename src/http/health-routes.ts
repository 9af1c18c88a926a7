/** Liveness (/healthz: the process answers) and readiness (/readyz: the store answers too). */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/port.js';
import { buildOpenApiDocument } from './openapi.js';

export function registerHealthRoutes(app: FastifyInstance, store: Store): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ready', store: store.kind };
    } catch {
      return reply.code(503).send({ status: 'unavailable', store: store.kind });
    }
  });
  // Serialised once: the document (~50 KB) never changes while the process runs, so no request
  // pays for (or leaves garbage from) stringifying it again.
  const document = Buffer.from(JSON.stringify(buildOpenApiDocument()));
  app.get('/svc/v1/openapi.json', (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(document);
  });
}
