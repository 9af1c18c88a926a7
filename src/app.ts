/**
 * buildApp(deps): the HTTP application, built but not listening. Every HTTP test uses it; main.ts
 * is the only caller that listens.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/schema.js';
import { RateLimiter } from './governance/rate-limit.js';
import { GovernanceService } from './governance/service.js';
import { Authenticator } from './http/auth.js';
import { registerBodyParsers } from './http/body.js';
import { registerErrorHandling } from './http/errors.js';
import { registerGovernanceRoutes } from './http/governance-routes.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { randomBase32 } from './lib/ids.js';
import type { Clock } from './lib/clock.js';
import type { Store } from './store/port.js';
import type { Upstreams } from './gateway/connections.js';
import { CountTokensService } from './gateway/count-tokens-service.js';
import { MessagesService } from './gateway/messages-service.js';
import { registerMessagesRoutes } from './http/messages-routes.js';
import type { Ledger } from './ledger/ledger.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  upstreams: Upstreams;
  ledger: Ledger;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => `req_${randomBase32(24)}`,
    bodyLimit: deps.config.limits.messages_body_bytes,
    return503OnClosing: true,
    forceCloseConnections: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, path: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request completed',
    );
  });
  registerBodyParsers(app);
  registerErrorHandling(app);

  const authenticator = new Authenticator(deps.store, deps.clock);
  const governance = new GovernanceService({
    store: deps.store,
    clock: deps.clock,
    config: deps.config,
    pendingFor: (runId) => deps.ledger.pendingFor(runId),
  });
  registerHealthRoutes(app, deps.store);
  registerGovernanceRoutes(app, { governance, authenticator, rateLimiter: new RateLimiter(deps.clock) });
  registerMessagesRoutes(app, {
    authenticator,
    messages: new MessagesService({ config: deps.config, upstreams: deps.upstreams, ledger: deps.ledger }),
    countTokens: new CountTokensService(deps.upstreams, deps.ledger),
  });
  await app.ready();
  return app;
}
