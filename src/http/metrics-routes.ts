/**
 * GET /metrics on the gateway's port (a Gateway Key with governance:read, as a bearer token): the
 * key's own Project's series only (GatewayMetrics.projectExposition). The whole process's view, every
 * Project and the process-wide families, is served only by the unauthenticated listener on
 * `metrics.listen` (a separate address the operator chooses, usually reachable only from inside the
 * cluster) that Prometheus normally scrapes.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { requestRecordOf } from '../observability/http-hooks.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { type Authenticator, requireScopes } from './auth.js';

export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: GatewayMetrics,
  authenticator: Authenticator,
): void {
  app.get('/metrics', async (request, reply) => {
    const caller = await authenticator.authenticate(request.headers, requestRecordOf(request));
    requireScopes(caller, ['governance:read']);
    const text = await metrics.projectExposition(caller.projectId);
    return reply.header('content-type', metrics.contentType).send(text);
  });
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export function startMetricsListener(
  metrics: GatewayMetrics,
  listen: { host: string; port: number },
): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.exposition().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : listen.port;
      resolve({
        url: `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
