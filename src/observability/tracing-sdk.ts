/**
 * Starts the OpenTelemetry tracing SDK: a tracer provider with an AsyncLocalStorage context
 * manager and the W3C trace-context propagator, exporting over OTLP/HTTP (batched), or to the
 * exporter a test gives (one span at a time). Only the composition root calls this, and only when
 * `tracing.endpoint` is configured; otherwise no SDK is loaded and the API stays a no-op.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

export interface TracingSettings {
  /** OTLP/HTTP traces endpoint, for example http://collector:4318/v1/traces. */
  endpoint?: string | undefined;
  serviceName: string;
  /** Fraction of new traces sampled (a sampled inbound parent is always followed). */
  sampleRatio: number;
  /** Tests: export here, span by span, instead of OTLP. */
  exporter?: SpanExporter;
}

export interface RunningTracing {
  /** Exports what is buffered. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function startTracing(settings: TracingSettings): Promise<RunningTracing> {
  let processor: SimpleSpanProcessor | BatchSpanProcessor;
  if (settings.exporter) processor = new SimpleSpanProcessor({ exporter: settings.exporter });
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.endpoint }) });
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [processor],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
