/**
 * The span of a background attempt: one CLIENT span from its reservation to its settlement, made
 * by the process that settles it, in the trace of the request that settled it (a cancel) or as a
 * job's root span (`svc.job <kind>`, whose trace the upstream call and the log lines carry), carrying the settlement outcome and the audited cost.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObservability } from '../../src/observability/observability.js';
import { type RunningTracing, startTracing } from '../../src/observability/tracing-sdk.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { deferredConfig, eventually, SEALING_KEY } from '../support/deferred-gateway.js';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';

const INBOUND_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const exporter = new InMemorySpanExporter();
let tracing: RunningTracing;
let sim: Simulator;
let gateway: TestGateway;
let key: string;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'svc-test', sampleRatio: 1, exporter });
  sim = await startSimulator();
  gateway = await startTestGateway({
    observability: createObservability({ metrics: true, tracing: true }),
    environment: { SVC_TEST_SEALING_KEY: SEALING_KEY },
    config: {
      ...deferredConfig(sim.url),
      jobs: { poll_interval_ms: 10, batch_poll_interval_ms: 20, lease_ms: 2000, sweep_interval_ms: 50 },
    },
  });
  key = await gateway.key('prj_a');
}, 30_000);

afterAll(async () => {
  await gateway?.close();
  await sim?.close();
  await tracing?.shutdown();
});

const attemptSpan = (attemptId: string) =>
  exporter.getFinishedSpans().find((span) => span.attributes['svc.attempt.id'] === attemptId);

describe('background attempt spans', () => {
  it('a completed background response: a root span from reservation to settlement, cost as audited', async () => {
    // The upstream answers a model of its own (a dated version): the span's response model.
    sim.setBehaviour({ answerModel: 'resp-upstream-2026-01-01' }, { times: 1 });
    const created = await call(gateway.url, 'POST', '/v1/responses', {
      key,
      body: { model: 'resp-model', input: 'hello', max_output_tokens: 32, background: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const attemptId = created.headers.get('svc-attempt-id')!;
    await eventually(
      async () => (await call(gateway.url, 'GET', `/v1/responses/${created.body.id}`, { key })).body,
      (value) => value.status === 'completed',
    );
    const span = await eventually(
      async () => attemptSpan(attemptId),
      (value) => value !== undefined,
    );
    const [entry] = (await gateway.store.listAudit({ limit: 100 })).filter(
      (row) => row.attemptId === attemptId,
    );
    expect(span!.name).toBe('chat resp-model');
    // Settled by the job, inside the job's root span; the upstream call carried that trace.
    const jobSpan = exporter
      .getFinishedSpans()
      .find((candidate) => candidate.spanContext().spanId === span!.parentSpanContext?.spanId);
    expect(jobSpan?.name).toBe('svc.job response');
    expect(jobSpan?.parentSpanContext?.spanId).toBeUndefined();
    expect(jobSpan?.attributes['svc.job.resource_id']).toBe(created.body.id);
    const upstream = sim.requests().filter((request) => request.path === '/v1/responses');
    expect(String(upstream.at(-1)?.headers.traceparent)).toMatch(
      new RegExp(`^00-${jobSpan!.spanContext().traceId}-[0-9a-f]{16}-01$`),
    );
    // The settlement's log line carries the job's trace.
    const settledLine = gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((line) => line.msg === 'background attempt settled' && line.attempt === attemptId);
    expect(settledLine?.trace_id).toBe(jobSpan!.spanContext().traceId);
    expect(span!.attributes).toMatchObject({
      'gen_ai.provider.name': 'vendorb',
      'gen_ai.request.model': 'resp-model',
      'gen_ai.response.model': 'resp-upstream-2026-01-01',
      'svc.connection': 'sim-responses',
      'svc.settlement.outcome': 'completed',
      'svc.cost_micros_usd': entry!.costMicrosUsd,
      'gen_ai.usage.output_tokens': entry!.usage!.outputTokens,
    });
    // Its start is the reservation's (the creating request), before the job ran.
    const startMs = span!.startTime[0] * 1000 + span!.startTime[1] / 1e6;
    expect(startMs).toBeLessThanOrEqual(Date.parse(entry!.createdAt) + 1);
  });

  it('cancelled while running: the span is in the trace of the cancel request', async () => {
    sim.setBehaviour({ latencyMs: 60_000 }, { model: 'sim-slow' });
    const created = await call(gateway.url, 'POST', '/v1/responses', {
      key,
      body: { model: 'resp-slow', input: 'hello', max_output_tokens: 32, background: true },
    });
    const attemptId = created.headers.get('svc-attempt-id')!;
    await eventually(
      async () => (await call(gateway.url, 'GET', `/v1/responses/${created.body.id}`, { key })).body,
      (value) => value.status === 'in_progress',
    );
    const cancelled = await call(gateway.url, 'POST', `/v1/responses/${created.body.id}/cancel`, {
      key,
      headers: { traceparent: `00-${INBOUND_TRACE}-00f067aa0ba902b7-01` },
    });
    expect(cancelled.body.status).toBe('cancelled');
    const span = await eventually(
      async () => attemptSpan(attemptId),
      (value) => value !== undefined,
    );
    const [entry] = (await gateway.store.listAudit({ limit: 100 })).filter(
      (row) => row.attemptId === attemptId,
    );
    expect(span!.spanContext().traceId).toBe(INBOUND_TRACE);
    expect(span!.attributes).toMatchObject({
      'svc.settlement.outcome': 'cancelled_running',
      'svc.cost_micros_usd': entry!.costMicrosUsd,
      'svc.reservation_micros_usd': entry!.reservationMicrosUsd,
    });
    expect(entry!.costMicrosUsd).toBe(entry!.reservationMicrosUsd);
  });
});
