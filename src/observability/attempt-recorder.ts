/**
 * The AttemptObserver the gateway runs with when observability is on: one implementation feeding
 * Prometheus metrics, spans and the request's log line from the attempt runner's calls.
 *
 * Hot path: label children are resolved once per distinct label set and kept (`AttemptSeries`),
 * so an attempt costs a map lookup, a handful of counter increments and histogram observations;
 * with tracing off no span object is made.
 */
import { type Attributes, type Context, context, type Span, SpanStatusCode } from '@opentelemetry/api';
import type {
  AttemptLabels,
  AttemptObserver,
  AttemptSettled,
  AttemptWatch,
  RefusalReason,
  RoutedAwayReason,
} from './attempt-observer.js';
import { AttemptSeries, operationName, providerName, type SeriesCache } from './attempt-series.js';
import { errorClass } from './error-types.js';
import type { GatewayMetrics } from './metrics.js';
import type { RequestRecord } from './request-scope.js';
import { ATTR, SpanKind, startSpan, trace, tracer } from './tracing.js';

export interface RecorderOptions {
  metrics: GatewayMetrics | undefined;
  tracing: boolean;
}

export class AttemptRecorder implements AttemptObserver {
  private readonly series: SeriesCache | undefined;

  constructor(private readonly options: RecorderOptions) {
    this.series = options.metrics ? new Map() : undefined;
  }

  started(
    attemptId: string,
    labels: AttemptLabels,
    reservationMicrosUsd: number,
    record: RequestRecord | undefined,
  ): AttemptWatch {
    if (record) noteAttempt(record, attemptId, labels);
    const metrics = this.options.metrics;
    const series = metrics ? AttemptSeries.of(this.series!, metrics, labels) : undefined;
    series?.admitted.inc();
    if (labels.streamed) series?.openStreams.inc();
    let span: Span | undefined;
    let parent: Context | undefined;
    if (this.options.tracing) {
      parent = routeContext(record, labels.alias);
      span = startSpan(
        `${operationName(labels.endpoint)} ${labels.alias}`,
        SpanKind.CLIENT,
        attemptAttributes(attemptId, labels, reservationMicrosUsd),
        parent,
      );
    }
    return new Watch(labels.streamed, series, span, parent, record);
  }

  held(
    attemptId: string,
    labels: AttemptLabels,
    _reservationMicrosUsd: number,
    record: RequestRecord | undefined,
  ): void {
    if (record) noteAttempt(record, attemptId, labels);
    const metrics = this.options.metrics;
    if (metrics) AttemptSeries.of(this.series!, metrics, labels).admitted.inc();
    if (this.options.tracing)
      trace.getActiveSpan()?.addEvent('svc.attempt_held', { [ATTR.attemptId]: attemptId });
  }

  settledHeld(
    attemptId: string,
    labels: AttemptLabels,
    reservedAtMs: number,
    result: AttemptSettled,
    record: RequestRecord | undefined,
  ): void {
    const metrics = this.options.metrics;
    if (metrics) AttemptSeries.of(this.series!, metrics, labels).settled(result);
    if (record) {
      // Settled inside a request (a cancel, a failed create): its log line tells what it committed.
      if (record.attemptId !== attemptId) noteAttempt(record, attemptId, labels);
      noteSettlement(record, result);
    }
    if (this.options.tracing) {
      // One span for the whole held attempt, from its reservation to this settlement, in the
      // settling context (the job's, or the request that cancelled it).
      const span = tracer().startSpan(
        `${operationName(labels.endpoint)} ${labels.alias}`,
        {
          kind: SpanKind.CLIENT,
          attributes: attemptAttributes(attemptId, labels, result.reservationMicrosUsd),
          startTime: Math.min(reservedAtMs, Date.now()),
        },
        context.active(),
      );
      endAttemptSpan(span, result);
    }
  }

  refused(labels: Parameters<AttemptObserver['refused']>[0], reason: RefusalReason): void {
    const metrics = this.options.metrics;
    if (metrics) {
      metrics.counter('svc_reservations_refused_total').inc({
        project: metrics.bounded('project', labels.projectId),
        alias: metrics.bounded('alias', labels.alias),
        endpoint: metrics.bounded('endpoint', labels.endpoint),
        reason,
      });
    }
    if (this.options.tracing)
      trace.getActiveSpan()?.addEvent('svc.reservation_refused', { 'svc.refusal.reason': reason });
  }

  routedAway(
    alias: string,
    connection: string,
    reason: RoutedAwayReason,
    record: RequestRecord | undefined,
  ): void {
    const metrics = this.options.metrics;
    if (metrics)
      metrics.counter('svc_routed_away_total').inc({
        alias: metrics.bounded('alias', alias),
        connection: metrics.bounded('connection', connection),
        reason,
      });
    if (this.options.tracing)
      routeSpanOf(record, alias)?.addEvent('svc.routed_away', {
        [ATTR.connection]: connection,
        'svc.route.reason': reason,
      });
  }

  fallback(
    alias: string,
    fromConnection: string,
    toConnection: string,
    errorType: string,
    record: RequestRecord | undefined,
  ): void {
    const metrics = this.options.metrics;
    const errorClassOf = errorClass(errorType);
    if (metrics)
      metrics.counter('svc_fallbacks_total').inc({
        alias: metrics.bounded('alias', alias),
        from_connection: metrics.bounded('connection', fromConnection),
        to_connection: metrics.bounded('connection', toConnection),
        error_type: errorClassOf,
      });
    if (this.options.tracing)
      routeSpanOf(record, alias)?.addEvent('svc.fallback', {
        'svc.fallback.from': fromConnection,
        'svc.fallback.to': toConnection,
        [ATTR.errorType]: errorClassOf,
      });
  }

  leaseExpired(count: number): void {
    this.options.metrics?.counter('svc_lease_expired_attempts_total').inc(count);
  }
}

class Watch implements AttemptWatch {
  private readonly startedMs = performance.now();
  private done = false;

  constructor(
    private readonly streamed: boolean,
    private readonly series: AttemptSeries | undefined,
    private readonly span: Span | undefined,
    private readonly parent: Context | undefined,
    private readonly record: RequestRecord | undefined,
  ) {}

  within<T>(fn: () => T): T {
    if (!this.span) return fn();
    return context.with(trace.setSpan(this.parent!, this.span), fn);
  }

  /** The answer's headers arrived: for a stream, its first chunk (a metric and a span event); else nothing. */
  firstByte(): void {
    if (!this.streamed) return;
    this.series?.timeToFirstChunk.observe((performance.now() - this.startedMs) / 1000);
    this.span?.addEvent('gen_ai.first_chunk');
  }

  settled(result: AttemptSettled): void {
    if (this.done) return;
    this.done = true;
    if (this.series) {
      this.series.settled(result);
      if (this.streamed) this.series.openStreams.dec();
    }
    if (this.record) noteSettlement(this.record, result);
    if (this.span) endAttemptSpan(this.span, result);
  }
}

function noteAttempt(record: RequestRecord, attemptId: string, labels: AttemptLabels): void {
  record.projectId = labels.projectId;
  record.keyId = labels.keyId;
  record.runId = labels.runId;
  record.alias = labels.alias;
  record.connection = labels.connection;
  record.attemptId = attemptId;
  record.attempts += 1;
}

function noteSettlement(record: RequestRecord, result: AttemptSettled): void {
  record.outcome = result.outcome;
  record.costMicrosUsd += result.costMicrosUsd;
  if (result.tokens) record.tokens = result.tokens;
}

function attemptAttributes(
  attemptId: string,
  labels: AttemptLabels,
  reservationMicrosUsd: number,
): Attributes {
  return {
    [ATTR.operationName]: operationName(labels.endpoint),
    [ATTR.providerName]: providerName(labels.profile),
    [ATTR.requestModel]: labels.alias,
    [ATTR.attemptId]: attemptId,
    [ATTR.project]: labels.projectId,
    [ATTR.keyId]: labels.keyId,
    [ATTR.connection]: labels.connection,
    [ATTR.profile]: labels.profile,
    [ATTR.primitive]: labels.primitive,
    [ATTR.upstreamModel]: labels.upstreamModel,
    [ATTR.streamed]: labels.streamed,
    [ATTR.reservation]: reservationMicrosUsd,
    ...(labels.runId !== null ? { [ATTR.runId]: labels.runId } : {}),
  };
}

/** The settlement's attributes on an attempt span, then its end. */
function endAttemptSpan(span: Span, result: AttemptSettled): void {
  span.setAttribute(ATTR.outcome, result.outcome);
  span.setAttribute(ATTR.cost, result.costMicrosUsd);
  if (result.responseModel) span.setAttribute(ATTR.responseModel, result.responseModel);
  if (result.tokens) {
    span.setAttribute(
      ATTR.inputTokens,
      result.tokens.inputTokens + result.tokens.cacheCreationInputTokens + result.tokens.cacheReadInputTokens,
    );
    span.setAttribute(ATTR.outputTokens, result.tokens.outputTokens);
  }
  if (result.httpStatus !== null) span.setAttribute('http.response.status_code', result.httpStatus);
  if (result.errorType) {
    span.setAttribute(ATTR.errorType, errorClass(result.errorType));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The request's routing span (opened by its first routing event), or none outside a request. */
function routeSpanOf(record: RequestRecord | undefined, alias: string): Span | undefined {
  if (!record) return undefined;
  if (!record.routeSpan)
    record.routeSpan = startSpan(
      `svc.route ${alias}`,
      SpanKind.INTERNAL,
      { [ATTR.alias]: alias },
      context.active(),
    );
  return record.routeSpan as Span;
}

function routeContext(record: RequestRecord | undefined, alias: string): Context {
  const span = routeSpanOf(record, alias);
  return span ? trace.setSpan(context.active(), span) : context.active();
}
