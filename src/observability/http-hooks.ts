/**
 * Per-request observability on the Fastify app:
 *   onRequest   open the request's record and, tracing on, its SERVER span (inbound `traceparent`)
 *   preHandler  tracing on: run the handler inside the span's context
 *   onError     remember the error code for the log line
 *   onSend      governance writes: remember the id of the resource written
 *   close       (the response finished or the client left) one log line, the HTTP metric, end spans
 * A streamed answer ends when its last frame is written, after its attempt settled, so its line
 * carries tokens and cost like any other.
 */
import { type Context, propagation, ROOT_CONTEXT, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { plainFieldsLogger } from '../lib/logger.js';
import { RATE_LIMITS } from '../limits/rate-limit-scope.js';
import type { CounterCell, GatewayMetrics } from './metrics.js';
import { newRequestRecord, type RequestRecord, traceIdOf } from './request-scope.js';
import { SpanKind, startSpan, withSpan } from './tracing.js';

interface RequestState {
  record: RequestRecord;
  span: Span | undefined;
  parent: Context;
}

declare module 'fastify' {
  interface FastifyRequest {
    svcObservability: RequestState | null;
  }
}

/** The record of a request (made by the onRequest hook below; absent only before it ran). */
export function requestRecordOf(request: FastifyRequest): RequestRecord | undefined {
  return request.svcObservability?.record;
}

const GOVERNANCE_ID = /"id"\s*:\s*"([A-Za-z0-9_-]{1,128})"/;

export function registerObservabilityHooks(
  app: FastifyInstance,
  options: { metrics: GatewayMetrics | undefined; tracing: boolean },
): void {
  const { metrics, tracing } = options;
  // The request line is built here from fixed keys with primitive values, none of them a redacted
  // path (src/lib/logger.ts): it is written without redaction and formatted by one JSON.stringify
  // (docs/performance.md, "Logging"). Every other line keeps pino's own path.
  const log = plainFieldsLogger(app.log as Logger);
  const requests = metrics?.counter('svc_http_requests_total');
  const rateLimited = metrics?.counter('svc_rate_limit_refusals_total');
  app.decorateRequest('svcObservability', null);
  // One child per (route, method, status), resolved once: no label hashing per request.
  // route -> method -> status: no string built per request.
  const requestChildren = new Map<string, Map<string, Map<number, CounterCell>>>();
  const requestCounter = (route: string, method: string, status: number): CounterCell => {
    let byMethod = requestChildren.get(route);
    if (!byMethod) {
      byMethod = new Map();
      requestChildren.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let child = byStatus.get(status);
    if (!child) {
      child = metrics!.counterCell('svc_http_requests_total', {
        route,
        method,
        status_class: `${Math.floor(status / 100)}xx`,
      });
      byStatus.set(status, child);
    }
    return child;
  };

  app.addHook('onRequest', (request, reply, done) => {
    const record = newRequestRecord();
    let span: Span | undefined;
    let parent: Context = ROOT_CONTEXT;
    if (tracing) {
      parent = propagation.extract(ROOT_CONTEXT, request.headers);
      span = startSpan(
        request.method,
        SpanKind.SERVER,
        {
          'http.request.method': request.method,
          'url.path': request.url.split('?')[0]!,
          'svc.request.id': request.id,
        },
        parent,
      );
    }
    record.traceId = span ? span.spanContext().traceId : traceIdOf(request.headers.traceparent);
    const state: RequestState = { record, span, parent };
    request.svcObservability = state;
    reply.raw.once('close', () => finish(request, reply, state));
    done();
  });

  if (tracing)
    app.addHook('preHandler', (request, _reply, done) => {
      const state = request.svcObservability!;
      if (state.span) withSpan(state.span, state.parent, done);
      else done();
    });

  app.addHook('onError', (request, _reply, error, done) => {
    const state = request.svcObservability;
    if (state) state.record.errorCode = String((error as { code?: unknown }).code ?? error.name);
    done();
  });

  app.addHook('onSend', (request, _reply, payload, done) => {
    const state = request.svcObservability;
    if (
      state &&
      request.method !== 'GET' &&
      request.url.startsWith('/svc/v1/') &&
      typeof payload === 'string'
    )
      state.record.resourceId = GOVERNANCE_ID.exec(payload)?.[1] ?? null;
    done(null, payload);
  });

  function finish(request: FastifyRequest, reply: FastifyReply, state: RequestState): void {
    const status = reply.raw.statusCode;
    const route = request.routeOptions.url ?? 'unmatched';
    const { record } = state;
    if (requests) requestCounter(route, request.method, status).inc();
    if (record.rateLimit !== null && rateLimited && metrics)
      rateLimited.inc({
        project: metrics.bounded('project', record.projectId ?? ''),
        surface: RATE_LIMITS[record.rateLimit],
        limit: record.rateLimit,
      });
    const line: Record<string, unknown> = {
      request_id: request.id,
      method: request.method,
      path: request.url.split('?')[0],
      route,
      status,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (!reply.raw.writableFinished) line.client_gone = true;
    addRecordFields(line, record, request);
    const span = state.span;
    if (span) {
      const context = span.spanContext();
      line.trace_id = context.traceId;
      line.span_id = context.spanId;
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const routeSpan = record.routeSpan as Span | undefined;
      if (routeSpan) {
        if (record.connection) routeSpan.setAttribute('svc.connection', record.connection);
        routeSpan.setAttribute('svc.route.attempts', record.attempts);
        routeSpan.end();
      }
      span.end();
    }
    // On the app's logger with request_id in the line: no per-request child (request-logger.ts).
    log.info(line, 'request completed');
  }
}

function addRecordFields(
  line: Record<string, unknown>,
  record: RequestRecord,
  request: FastifyRequest,
): void {
  if (record.projectId !== null) line.project = record.projectId;
  if (record.keyId !== null) line.key = record.keyId;
  if (record.errorCode !== null) line.error = record.errorCode;
  if (record.attempts > 0) {
    line.run = record.runId;
    line.alias = record.alias;
    line.connection = record.connection;
    line.attempt = record.attemptId;
    line.attempts = record.attempts;
    line.outcome = record.outcome;
    line.cost_micros_usd = record.costMicrosUsd;
    if (record.tokens) {
      line.input_tokens = record.tokens.inputTokens;
      line.output_tokens = record.tokens.outputTokens;
      line.cache_creation_input_tokens = record.tokens.cacheCreationInputTokens;
      line.cache_read_input_tokens = record.tokens.cacheReadInputTokens;
    }
  } else if (request.method !== 'GET' && request.url.startsWith('/svc/v1/')) {
    const resource = request.routeOptions.url;
    line.resource = resource;
    if (record.resourceId !== null) {
      line.resource_id = record.resourceId;
      // A Run created or closed: the line names it as `run`, like a model call's line.
      if (resource?.startsWith('/svc/v1/runs')) line.run = record.resourceId;
    }
  }
}
