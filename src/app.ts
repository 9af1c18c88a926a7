/**
 * buildApp(deps): the HTTP application, built but not listening. Every HTTP test uses it; main.ts
 * is the only caller that listens.
 */
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/schema.js';
import { GatewayError } from './errors/gateway-error.js';
import { dialectOf, renderError } from './errors/render.js';
import type { Upstreams } from './gateway/connections.js';
import { CountTokensService } from './gateway/count-tokens-service.js';
import { MessagesService } from './gateway/messages-service.js';
import { KeysService } from './governance/keys-service.js';
import { RateLimiter } from './governance/rate-limit.js';
import { GovernanceService } from './governance/service.js';
import { Authenticator } from './http/auth.js';
import { registerBodyParsers } from './http/body.js';
import { registerErrorHandling } from './http/errors.js';
import { registerGovernanceRoutes } from './http/governance-routes.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { registerMessagesRoutes } from './http/messages-routes.js';
import { registerResourceRoutes } from './http/resource-routes.js';
import type { Ledger } from './ledger/ledger.js';
import type { Clock } from './lib/clock.js';
import { randomBase32 } from './lib/ids.js';
import type { ObjectStore } from './objects/port.js';
import { registerDeferredWork } from './startup/deferred-work.js';
import type { Store } from './store/port.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  upstreams: Upstreams;
  ledger: Ledger;
  /** Private object store (files, spools, sealed objects); default: the local folder of the configuration. */
  objects?: ObjectStore;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => `req_${randomBase32(24)}`,
    bodyLimit: deps.config.limits.messages_body_bytes,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 512 },
    // Errors raised before routing (bad URL, over-long parameter) still answer in the route's
    // dialect with a request id; malformed HTTP gets a plain 400 without a stack.
    frameworkErrors: (error, request, reply) => {
      const path = (request.url ?? '/').split('?')[0]!;
      const rendered = renderError(
        dialectOf(path),
        new GatewayError('invalid_request', error.message),
        String(request.id),
      );
      void (reply as FastifyReply)
        .code(rendered.status)
        .header('request-id', String(request.id))
        .send(rendered.body);
    },
    clientErrorHandler: (_error, socket) => {
      if (socket.writable)
        socket.end(
          'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":{"code":"invalid_request","message":"Malformed HTTP request."}}',
        );
    },
    forceCloseConnections: 'idle',
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  });
  registerBodyParsers(app);
  registerErrorHandling(app);

  const authenticator = new Authenticator(deps.store, deps.clock, deps.config.auth.key_cache_ms);
  const governance = new GovernanceService({
    store: deps.store,
    clock: deps.clock,
    config: deps.config,
    pendingFor: (runId) => deps.ledger.pendingFor(runId),
  });
  registerHealthRoutes(app, deps.store);
  const keys = new KeysService({
    store: deps.store,
    clock: deps.clock,
    config: deps.config,
    onRevoked: (keyId) => authenticator.forget(keyId),
  });
  registerGovernanceRoutes(app, {
    governance,
    authenticator,
    rateLimiter: new RateLimiter(deps.clock),
    keys,
  });
  registerMessagesRoutes(app, {
    authenticator,
    messages: new MessagesService({ config: deps.config, upstreams: deps.upstreams, ledger: deps.ledger }),
    countTokens: new CountTokensService(deps.upstreams, deps.ledger),
  });
  registerResourceRoutes(app, { ...deps, authenticator });
  registerDeferredWork(app, { ...deps, authenticator });
  await app.ready();
  return app;
}
