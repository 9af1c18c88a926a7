/**
 * Spans with an in-memory exporter: the span tree of a fallback call and of a streamed call, the
 * inbound `traceparent` honoured, the attempt's `traceparent` sent upstream, and the trace and
 * span ids on the request's log line.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createObservability } from '../../src/observability/observability.js';
import { type RunningTracing, startTracing } from '../../src/observability/tracing-sdk.js';
import { Governance, messageBody, postMessages, startGateway } from '../messages/support.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';

const DIRECT = 'vendora.messages.2023-06-01';
const COMPAT = 'compat.chat-embeddings.v1';
const INBOUND_TRACE = '0af7651916cd43dd8448eb211c80319c';
const INBOUND_PARENT = 'b7ad6b7169203331';

const exporter = new InMemorySpanExporter();
let tracing: RunningTracing;
let gateway: SimulatedGateway;
let key: string;
let governance: Governance;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'svc-test', sampleRatio: 1, exporter });
  gateway = await startGateway({ observability: createObservability({ metrics: true, tracing: true }) });
  key = await gateway.key();
  governance = new Governance(gateway.url, key);
});

afterAll(async () => {
  await gateway?.close();
  await tracing?.shutdown();
});

beforeEach(() => {
  exporter.reset();
  gateway.simulator.reset();
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

function treeOf(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

describe('traces', () => {
  it('a fallback call: request -> route -> two attempts (first 5xx, second completed), traceparent honoured and sent upstream', async () => {
    const run = await governance.run(1_000_000);
    exporter.reset();
    gateway.simulator.setBehaviour({ status: 500 }, { model: 'up-first', times: 1 });
    const result = await postMessages(gateway.url, key, messageBody('fallback'), {
      'x-svc-run-id': run.id,
      traceparent: `00-${INBOUND_TRACE}-${INBOUND_PARENT}-01`,
    });
    expect(result.status).toBe(200);
    const spans = treeOf(INBOUND_TRACE);
    const server = spans.find((span) => span.name === 'POST /v1/messages')!;
    expect(server, spans.map((span) => span.name).join(', ')).toBeDefined();
    expect(parentOf(server)).toBe(INBOUND_PARENT);
    const route = spans.find((span) => span.name === 'svc.route fallback')!;
    expect(parentOf(route)).toBe(idOf(server));
    expect(route.events.map((event) => event.name)).toContain('svc.fallback');
    const attempts = spans
      .filter((span) => span.name === 'chat fallback')
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(parentOf(attempt)).toBe(idOf(route));
    const [first, second] = attempts as [ReadableSpan, ReadableSpan];
    expect(first.attributes).toMatchObject({
      'svc.connection': DIRECT,
      'svc.settlement.outcome': 'refused_upstream',
      'error.type': 'http_5xx',
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'vendora',
      'gen_ai.request.model': 'fallback',
      'svc.run.id': run.id,
    });
    const audit = await gateway.store.listAudit({ runId: run.id, limit: 10 });
    const served = audit.find((entry) => entry.connection === COMPAT)!;
    expect(second.attributes).toMatchObject({
      'svc.connection': COMPAT,
      'svc.attempt.id': served.attemptId,
      'svc.settlement.outcome': 'completed',
      'svc.cost_micros_usd': served.costMicrosUsd,
      'gen_ai.usage.output_tokens': served.usage!.outputTokens,
    });
    // The request log names the trace of both attempts.
    expect(audit.map((entry) => entry.traceId)).toEqual([INBOUND_TRACE, INBOUND_TRACE]);
    // Each upstream received the traceparent of its own attempt span.
    const upstream = gateway.simulator.requests({ model: 'up-second' }).at(-1)!;
    expect(upstream.headers.traceparent).toBe(`00-${INBOUND_TRACE}-${idOf(second)}-01`);
    const firstUpstream = gateway.simulator.requests({ model: 'up-first' }).at(-1)!;
    expect(firstUpstream.headers.traceparent).toBe(`00-${INBOUND_TRACE}-${idOf(first)}-01`);
    // Store transactions inside the request are spans of the same trace.
    const store = spans.filter((span) => span.name.startsWith('svc.store '));
    expect(store.map((span) => span.name)).toEqual(
      expect.arrayContaining(['svc.store reserve', 'svc.store settle']),
    );
    // The request's log line carries the trace and span ids.
    const line = gateway.logs
      .map((text) => JSON.parse(text))
      .find((entry) => entry.msg === 'request completed' && entry.trace_id === INBOUND_TRACE);
    expect(line).toMatchObject({ span_id: idOf(server), attempt: served.attemptId, attempts: 2 });
  });

  it('a streamed call: one attempt span with a first-chunk event, ended after the stream', async () => {
    const trace = '1af7651916cd43dd8448eb211c80319d';
    const result = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        traceparent: `00-${trace}-${INBOUND_PARENT}-01`,
      },
      body: JSON.stringify(messageBody(`m:${DIRECT}`, { stream: true })),
    });
    expect(result.status).toBe(200);
    await result.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const spans = treeOf(trace);
    const server = spans.find((span) => span.name === 'POST /v1/messages')!;
    const route = spans.find((span) => span.name === `svc.route m:${DIRECT}`)!;
    const attempt = spans.find((span) => span.name === `chat m:${DIRECT}`)!;
    expect(parentOf(route)).toBe(idOf(server));
    expect(parentOf(attempt)).toBe(idOf(route));
    expect(attempt.attributes).toMatchObject({ 'svc.streamed': true, 'svc.settlement.outcome': 'completed' });
    expect(attempt.events.map((event) => event.name)).toEqual(['gen_ai.first_chunk']);
    // The SDK anchors each span's clock at its own Date.now(), a whole millisecond, so two spans'
    // times can disagree by up to 1 ms: the server span may not end before the attempt's, less that.
    const endedMs = (span: ReadableSpan) => span.endTime[0] * 1e3 + span.endTime[1] / 1e6;
    expect(endedMs(server)).toBeGreaterThanOrEqual(endedMs(attempt) - 1);
  });
});
