/**
 * Span helpers over @opentelemetry/api. Nothing here starts an SDK (main.ts does, when tracing is
 * configured); callers only reach these helpers when tracing is on, so "off" allocates nothing.
 *
 * Span tree of a model call:
 *   HTTP server span (inbound `traceparent` honoured)
 *     svc.route <alias>                    the routing decision: routed-away targets and fallbacks as events
 *       <operation> <alias>                one CLIENT span per upstream attempt (GenAI attributes,
 *                                          svc.attempt.id, settlement outcome and cost); `traceparent`
 *                                          of this span is sent upstream
 *     svc.store <operation>                one span per store transaction made inside the request
 */
import { type Attributes, type Context, context, type Span, SpanKind, trace } from '@opentelemetry/api';

export const TRACER_NAME = 'svc-gateway';

export const tracer = () => trace.getTracer(TRACER_NAME);

/** Attribute names (GenAI semantic conventions where one exists; ours under `svc.`). */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  errorType: 'error.type',
  attemptId: 'svc.attempt.id',
  project: 'svc.project.id',
  keyId: 'svc.key.id',
  runId: 'svc.run.id',
  connection: 'svc.connection',
  profile: 'svc.profile',
  primitive: 'svc.primitive',
  upstreamModel: 'svc.upstream.model',
  streamed: 'svc.streamed',
  reservation: 'svc.reservation_micros_usd',
  outcome: 'svc.settlement.outcome',
  cost: 'svc.cost_micros_usd',
  alias: 'svc.alias',
} as const;

export function startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context): Span {
  return tracer().startSpan(name, { kind, attributes }, parent);
}

export function activeSpan(): Span | undefined {
  return trace.getSpan(context.active());
}

export function withSpan<T>(span: Span, parent: Context, fn: () => T): T {
  return context.with(trace.setSpan(parent, span), fn);
}

export { context, SpanKind, trace };
