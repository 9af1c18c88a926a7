/**
 * GET /metrics after known traffic (a fallback call, a stream, a count_tokens call, a refused
 * reservation, governance writes): every figure is compared with the audit trail, and the text is
 * checked as Prometheus exposition format by a strict reader and a third-party parser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startMetricsListener } from '../../src/http/metrics-routes.js';
import { createObservability } from '../../src/observability/observability.js';
import { Governance, messageBody, postCountTokens, postMessages, startGateway } from '../messages/support.js';
import { baseConfig, call } from '../support/gateway.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { type Sample, scrapeListener, strictSamples, total } from './support.js';

const DIRECT = 'vendora.messages.2023-06-01';
const COMPAT = 'compat.chat-embeddings.v1';

const observability = createObservability({ metrics: true, tracing: false });
let gateway: SimulatedGateway;
let key: string;
let samples: Sample[];

/** The whole process's view (the metrics listener); a key's view is its Project's (project-metrics.test.ts). */
async function scrape(): Promise<Sample[]> {
  return scrapeListener(observability.metrics!);
}

beforeAll(async () => {
  gateway = await startGateway({ observability });
  key = await gateway.key();
  const governance = new Governance(gateway.url, key);
  const run = await governance.run(1_000_000);
  gateway.simulator.setBehaviour({ status: 500 }, { model: 'up-first', times: 1 });
  const fallback = await postMessages(gateway.url, key, messageBody('fallback'), { 'x-svc-run-id': run.id });
  expect(fallback.status, JSON.stringify(fallback.body)).toBe(200);
  const stream = await postMessages(gateway.url, key, messageBody(`m:${DIRECT}`, { stream: true }), {
    'x-svc-run-id': run.id,
  });
  expect(stream.status).toBe(200);
  const { max_tokens: _unused, ...countBody } = messageBody(`m:${DIRECT}`);
  const counted = await postCountTokens(gateway.url, key, countBody);
  expect(counted.status, JSON.stringify(counted.body)).toBe(200);
  const poor = await governance.run(1);
  const refused = await postMessages(gateway.url, key, messageBody('fallback'), { 'x-svc-run-id': poor.id });
  expect(refused.status, JSON.stringify(refused.body)).toBe(403);
  expect(refused.body.error.code).toBe('run_budget_exceeded');
  samples = await scrape();
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

describe('GET /metrics', () => {
  it('committed cost per Project/alias/connection equals the audit trail, micro-USD for micro-USD', async () => {
    const audit = await gateway.store.listAudit({ limit: 10_000 });
    expect(audit).toHaveLength(4);
    const expected = new Map<string, number>();
    for (const entry of audit) {
      const group = `${entry.projectId}|${entry.alias}|${entry.connection}`;
      expected.set(group, (expected.get(group) ?? 0) + entry.costMicrosUsd);
    }
    for (const [group, cost] of expected) {
      const [project, alias, connection] = group.split('|') as [string, string, string];
      expect(total(samples, 'svc_cost_micros_usd_total', { project, alias, connection }), group).toBe(cost);
    }
    const sum = audit.reduce((all, entry) => all + entry.costMicrosUsd, 0);
    expect(sum).toBeGreaterThan(0);
    expect(total(samples, 'svc_cost_micros_usd_total')).toBe(sum);
  });

  it('counts reservations, settlements by outcome, fallbacks, upstream errors and refusals exactly', () => {
    expect(total(samples, 'svc_reservations_admitted_total')).toBe(4);
    expect(total(samples, 'svc_reservations_admitted_total', { endpoint: '/v1/messages/count_tokens' })).toBe(
      1,
    );
    expect(total(samples, 'svc_settlements_total', { outcome: 'completed' })).toBe(3);
    expect(
      total(samples, 'svc_settlements_total', {
        outcome: 'refused_upstream',
        connection: DIRECT,
        alias: 'fallback',
      }),
    ).toBe(1);
    expect(total(samples, 'svc_settlements_total')).toBe(4);
    expect(total(samples, 'svc_unknown_attempts_total')).toBe(0);
    expect(
      total(samples, 'svc_fallbacks_total', {
        alias: 'fallback',
        from_connection: DIRECT,
        to_connection: COMPAT,
      }),
    ).toBe(1);
    expect(total(samples, 'svc_upstream_errors_total', { connection: DIRECT, error_type: 'http_5xx' })).toBe(
      1,
    );
    expect(
      total(samples, 'svc_reservations_refused_total', { reason: 'run_budget_exceeded', alias: 'fallback' }),
    ).toBe(1);
    expect(total(samples, 'svc_open_streams')).toBe(0);
  });

  it('GenAI histograms: durations per attempt, tokens equal to the audited usage, time to first chunk for the stream', async () => {
    const audit = await gateway.store.listAudit({ limit: 10_000 });
    const output = audit.reduce((sum, entry) => sum + (entry.usage?.outputTokens ?? 0), 0);
    const input = audit.reduce(
      (sum, entry) =>
        sum +
        (entry.usage
          ? entry.usage.inputTokens + entry.usage.cacheCreationInputTokens + entry.usage.cacheReadInputTokens
          : 0),
      0,
    );
    expect(output).toBeGreaterThan(0);
    expect(total(samples, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output' })).toBe(output);
    expect(total(samples, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input' })).toBe(input);
    expect(total(samples, 'gen_ai_client_operation_duration_seconds_count')).toBe(4);
    expect(
      total(samples, 'gen_ai_client_operation_duration_seconds_count', {
        error_type: 'http_5xx',
        gen_ai_operation_name: 'chat',
        gen_ai_provider_name: 'vendora',
        gen_ai_request_model: 'fallback',
      }),
    ).toBe(1);
    expect(
      total(samples, 'gen_ai_client_operation_time_to_first_chunk_seconds_count', { connection: DIRECT }),
    ).toBe(1);
    expect(total(samples, 'gen_ai_client_operation_time_to_first_chunk_seconds_count')).toBe(1);
  });

  it('times store transactions at the port (one settle per attempt)', () => {
    expect(total(samples, 'svc_store_transaction_duration_seconds_count', { operation: 'settle' })).toBe(4);
    expect(total(samples, 'svc_store_transaction_duration_seconds_count', { operation: 'reserve' })).toBe(5);
    expect(total(samples, 'svc_http_requests_total', { route: '/v1/messages', status_class: '2xx' })).toBe(2);
  });

  it('never labels a Run, Work Unit, attempt or request id', async () => {
    const audit = await gateway.store.listAudit({ limit: 10_000 });
    const ids = audit.flatMap((entry) => [entry.runId, entry.attemptId]).filter(Boolean) as string[];
    const values = samples.flatMap((sample) => Object.values(sample.labels));
    for (const id of ids) expect(values).not.toContain(id);
    expect(values.filter((value) => /^(run|wu|att|req)_[A-Z0-9]/.test(value))).toEqual([]);
  });

  it('needs a Gateway Key with governance:read', async () => {
    expect((await call(gateway.url, 'GET', '/metrics')).status).toBe(401);
    const inferenceOnly = await gateway.key('prj_a', ['inference']);
    const refused = await call(gateway.url, 'GET', '/metrics', { key: inferenceOnly });
    expect(refused.status).toBe(403);
  });

  it('is served unauthenticated on the separate metrics listener, and nothing else there', async () => {
    const listener = await startMetricsListener(observability.metrics!, { host: '127.0.0.1', port: 0 });
    try {
      const response = await fetch(`${listener.url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      expect(total(strictSamples(text), 'svc_cost_micros_usd_total')).toBe(
        total(samples, 'svc_cost_micros_usd_total'),
      );
      expect((await fetch(`${listener.url}/other`)).status).toBe(404);
    } finally {
      await listener.close();
    }
  });

  it('metrics.listen and tracing are configuration fields with safe defaults', () => {
    const config = parseConfig({ ...baseConfig(), metrics: { listen: { port: 9464 } } }, 'test', {});
    expect(config.metrics).toEqual({ enabled: true, listen: { host: '127.0.0.1', port: 9464 } });
    expect(config.tracing).toEqual({ service_name: 'svc-gateway', sample_ratio: 1 });
    expect(() =>
      parseConfig({ ...baseConfig(), tracing: { endpoint: 'collector:4318' } }, 'test', {}),
    ).toThrow(/tracing\/endpoint/);
  });
});
