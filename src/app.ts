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
import { GatewayError } from './errors/gateway-error.js';
import { dialectOf, renderError } from './errors/render.js';
import { registerBatchesRoutes } from './http/batches-routes.js';
import { registerBodyParsers } from './http/body.js';
import { registerCaptureHooks } from './http/capture-hooks.js';
import { registerCaptureRoutes } from './http/capture-routes.js';
import { registerChatRoutes } from './http/chat-routes.js';
import { registerConsoleRoutes } from './http/console-routes.js';
import { registerErrorHandling } from './http/errors.js';
import { registerEventRoutes } from './http/events-routes.js';
import { governanceGuard, registerGovernanceRoutes } from './http/governance-routes.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { registerInputGuard } from './http/input-guard.js';
import { registerMessagesRoutes } from './http/messages-routes.js';
import { registerMetricsRoute } from './http/metrics-routes.js';
import { registerModelsRoutes } from './http/models-routes.js';
import { registerRateLimitHeaders } from './http/rate-limit-headers.js';
import { registerReportRoutes } from './http/report-routes.js';
import { registerResourceRoutes } from './http/resource-routes.js';
import { registerResponsesRoutes } from './http/responses-routes.js';
import {
  applyIdlePolicy,
  ClientSockets,
  clientErrorHandler,
  serverCreationOptions,
  watchStalledWrites,
} from './http/socket-limits.js';
import { registerObservabilityHooks } from './observability/http-hooks.js';
import { noObservability } from './observability/observability.js';
import { requestIdFor } from './observability/request-id.js';
import { lazyChildLogger } from './observability/request-logger.js';
import { type AppDeps, composeServices } from './startup/compose.js';

export type { AppDeps };

/** Batches and deferred responses: a 409 is a state conflict, retrying the same call cannot succeed. */
const DEFERRED_PATHS = /^\/v1\/(batches|responses)(\/|$|\?)/;

/** How long closing waits for queued body captures to be written (the rest are dropped and counted). */
const CAPTURE_DRAIN_MS = 5_000;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const sockets = new ClientSockets();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdFor,
    childLoggerFactory: lazyChildLogger,
    bodyLimit: deps.config.limits.messages_body_bytes,
    // A request that reaches a closing app (a connection accepted just before a reload took the
    // listening socket, or kept alive) is served, with `Connection: close` so its client moves on
    // to the next gateway, rather than answered 503: the store stays open until the drain ends.
    return503OnClosing: false,
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
    clientErrorHandler: clientErrorHandler(sockets),
    http: serverCreationOptions(deps.config.listen.timeouts),
    requestTimeout: deps.config.listen.timeouts.request_ms,
    keepAliveTimeout: deps.config.listen.timeouts.keep_alive_ms,
    forceCloseConnections: 'idle',
  });
  sockets.track(app.server);
  applyIdlePolicy(app.server, deps.config.listen.timeouts, sockets);
  watchStalledWrites(app.server, deps.config.listen.timeouts.idle_ms, sockets);
  // Per-request hooks take a callback rather than returning a promise: one allocation and one
  // microtask fewer per hook per request (docs/performance.md).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id);
    done();
  });
  const observability = deps.observability ?? noObservability;
  registerObservabilityHooks(app, observability);
  registerRateLimitHeaders(app);
  const services = composeServices(deps);
  const { authenticator, captures } = services;
  registerCaptureHooks(app, { policy: captures.policy, writer: captures.writer, clock: deps.clock });
  registerBodyParsers(app, { keepJsonText: captures.policy.anyEnabled });
  registerInputGuard(app);
  registerErrorHandling(app);

  registerHealthRoutes(app, deps.store);
  if (observability.metrics) registerMetricsRoute(app, observability.metrics, authenticator);
  registerGovernanceRoutes(app, services);
  registerReportRoutes(app, {
    guard: governanceGuard(services),
    store: deps.store,
    clock: deps.clock,
    pendingFor: (runId) => deps.ledger.pendingFor(runId),
    captureStatus: (projectId, attemptId) => captures.reader.status(projectId, attemptId),
  });
  registerEventRoutes(app, { guard: governanceGuard(services), store: deps.store });
  registerCaptureRoutes(app, { guard: governanceGuard(services), reader: captures.reader });
  registerConsoleRoutes(app, deps.consoleDir);
  registerMessagesRoutes(app, services);
  registerResourceRoutes(app, { ...services, maxUploadBytes: deps.config.objects.max_upload_bytes });
  registerResponsesRoutes(app, { authenticator, responses: services.responses });
  registerChatRoutes(app, { authenticator, chat: services.chat });
  registerBatchesRoutes(app, { authenticator, batches: services.batches });
  registerModelsRoutes(app, services);
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 409 && DEFERRED_PATHS.test(request.url)) reply.header('x-should-retry', 'false');
    done(null, payload);
  });
  // The worker runs only while the app listens (the gateway server, end-to-end tests); an app that
  // is only built (inject tests) runs no background work. It stops before the store closes.
  app.addHook('onListen', async () => {
    await services.worker.start();
    services.dispatcher.start();
  });
  app.addHook('onClose', async () => {
    await services.dispatcher.stop();
    await services.worker.stop();
    // Captures of calls that just finished are written before the store and objects close.
    await captures.writer.close(CAPTURE_DRAIN_MS);
  });
  await app.ready();
  return app;
}
