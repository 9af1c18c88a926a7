/** The pino mixin used when tracing is on: the active trace and span ids on every log line. */
import { context, trace } from '@opentelemetry/api';

export function traceFields(): Record<string, unknown> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const ids = span.spanContext();
  return { trace_id: ids.traceId, span_id: ids.spanId };
}
