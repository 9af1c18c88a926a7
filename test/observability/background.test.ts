/**
 * Background attempts (batches, deferred responses) in the metrics: after a batch and background
 * responses run to their ends (completed, cancelled while queued, cancelled while running, an
 * idempotent replay released), a scrape equals the audit trail exactly, series by series. A
 * settlement repeated after the first (the sweep, a lost race) reports nothing. On PostgreSQL, an
 * attempt reserved by one replica and settled by another is reported by the one that settled it,
 * with the labels stored with the attempt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptRunner } from '../../src/ledger/attempt-runner.js';
import { createObservability, type Observability } from '../../src/observability/observability.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import type { AuditEntry } from '../../src/store/port.js';
import { deferredConfig, eventually, SEALING_KEY } from '../support/deferred-gateway.js';
import {
  type CallResult,
  call,
  type StoreKind,
  startTestGateway,
  type TestGateway,
} from '../support/gateway.js';
import { type Sample, scrapeListener, total } from './support.js';

const JOBS = {
  concurrency: 1,
  poll_interval_ms: 10,
  batch_poll_interval_ms: 20,
  lease_ms: 2000,
  sweep_interval_ms: 50,
};

function startGateway(
  sim: Simulator,
  observability: Observability,
  store: StoreKind = 'sqlite',
  databaseUrl?: string,
  objectsPath?: string,
): Promise<TestGateway> {
  const config = deferredConfig(sim.url);
  // Replicas share one object folder, as they share one bucket in production.
  if (objectsPath) config.objects = { ...(config.objects as object), path: objectsPath };
  return startTestGateway({
    store,
    ...(databaseUrl ? { databaseUrl } : {}),
    observability,
    environment: { SVC_TEST_SEALING_KEY: SEALING_KEY },
    config: { ...config, jobs: JOBS },
  });
}

/** The whole process's view, on a metrics listener (a key's /metrics shows its Project only). */
function scrape(observability: Observability): Promise<Sample[]> {
  return scrapeListener(observability.metrics!);
}

function line(customId: string, text: string): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/messages',
    body: { model: 'batch-model', max_tokens: 100, messages: [{ role: 'user', content: text }] },
  });
}

/** Every figure the metrics keep per attempt, summed from the audit trail. */
function expectEqualToAudit(samples: Sample[], audit: AuditEntry[]): void {
  const groups = new Map<string, AuditEntry[]>();
  for (const entry of audit) {
    const group = `${entry.projectId}|${entry.alias}|${entry.connection}`;
    groups.set(group, [...(groups.get(group) ?? []), entry]);
  }
  for (const [group, entries] of groups) {
    const [project, alias, connection] = group.split('|') as [string, string, string];
    const where = { project, alias, connection };
    const cost = entries.reduce((sum, entry) => sum + entry.costMicrosUsd, 0);
    expect(total(samples, 'svc_cost_micros_usd_total', where), `cost ${group}`).toBe(cost);
    expect(total(samples, 'svc_reservations_admitted_total', where), `admitted ${group}`).toBe(
      entries.length,
    );
    expect(total(samples, 'svc_settlements_total', where), `settlements ${group}`).toBe(entries.length);
    for (const outcome of new Set(entries.map((entry) => entry.outcome)))
      expect(total(samples, 'svc_settlements_total', { ...where, outcome }), `${outcome} ${group}`).toBe(
        entries.filter((entry) => entry.outcome === outcome).length,
      );
    expect(total(samples, 'svc_unknown_attempts_total', where)).toBe(
      entries.filter((entry) => entry.outcome === 'unknown').length,
    );
    expect(total(samples, 'gen_ai_client_operation_duration_seconds_count', { connection })).toBeGreaterThan(
      0,
    );
  }
  expect(total(samples, 'svc_cost_micros_usd_total')).toBe(
    audit.reduce((sum, entry) => sum + entry.costMicrosUsd, 0),
  );
  expect(total(samples, 'svc_settlements_total')).toBe(audit.length);
  expect(total(samples, 'svc_reservations_admitted_total')).toBe(audit.length);
  expect(total(samples, 'gen_ai_client_operation_duration_seconds_count')).toBe(audit.length);
  const output = audit.reduce((sum, entry) => sum + (entry.usage?.outputTokens ?? 0), 0);
  const input = audit.reduce(
    (sum, entry) =>
      sum +
      (entry.usage
        ? entry.usage.inputTokens + entry.usage.cacheCreationInputTokens + entry.usage.cacheReadInputTokens
        : 0),
    0,
  );
  expect(total(samples, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output' })).toBe(output);
  expect(total(samples, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input' })).toBe(input);
  expect(total(samples, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'output' })).toBe(
    audit.filter((entry) => entry.usage !== null).length,
  );
}

describe('background attempts in the metrics (SQLite)', () => {
  let sim: Simulator;
  let gateway: TestGateway;
  const observability = createObservability({ metrics: true, tracing: false });
  let key: string;
  let samples: Sample[];
  let audit: AuditEntry[];
  let runningCancel: CallResult;

  beforeAll(async () => {
    sim = await startSimulator();
    gateway = await startGateway(sim, observability);
    key = await gateway.key('prj_a');
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: key,
      maxRetries: 0,
      defaultHeaders: { 'Svc-Route': 'sim-vendora' },
    });

    // A batch run to completion, and one the upstream refuses at submission (refused_upstream).
    const file = await client.files.create(
      {
        file: await toFile(
          Buffer.from(`${[line('a', 'One'), line('b', 'Two two')].join('\n')}\n`),
          'in.jsonl',
        ),
        purpose: 'batch',
      },
      { headers: { 'Idempotency-Key': `obs-file-${Date.now()}` } },
    );
    const body = {
      input_file_id: file.id,
      endpoint: '/v1/messages' as never,
      completion_window: '24h' as const,
    };
    const batch = await client.batches.create(body, {
      headers: { 'Idempotency-Key': `obs-1-${Date.now()}` },
    });
    await eventually(
      () => client.batches.retrieve(batch.id),
      (value) => value.status === 'completed',
    );
    sim.setBehaviour({ status: 400 }, { wire: 'message-batches', times: 1 });
    const refused = await client.batches.create(body, {
      headers: { 'Idempotency-Key': `obs-2-${Date.now()}` },
    });
    await eventually(
      () => client.batches.retrieve(refused.id),
      (value) => value.status === 'failed',
    );

    // Background responses: one completed, one cancelled while queued, one cancelled while running.
    const create = (model: string) =>
      call(gateway.url, 'POST', '/v1/responses', {
        key,
        body: { model, input: 'hello', max_output_tokens: 32, background: true },
      });
    const done = await create('resp-model');
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    await eventually(
      async () => (await call(gateway.url, 'GET', `/v1/responses/${done.body.id}`, { key })).body,
      (value) => value.status === 'completed',
    );
    sim.setBehaviour({ latencyMs: 60_000 }, { model: 'sim-slow' });
    const running = await create('resp-slow');
    await eventually(
      async () => (await call(gateway.url, 'GET', `/v1/responses/${running.body.id}`, { key })).body,
      (value) => value.status === 'in_progress',
    );
    // One job at a time (concurrency 1): this one waits behind the slow one.
    const queued = await create('resp-model');
    expect((await call(gateway.url, 'GET', `/v1/responses/${queued.body.id}`, { key })).body.status).toBe(
      'queued',
    );
    expect(
      (await call(gateway.url, 'POST', `/v1/responses/${queued.body.id}/cancel`, { key })).body.status,
    ).toBe('cancelled');
    runningCancel = await call(gateway.url, 'POST', `/v1/responses/${running.body.id}/cancel`, { key });
    expect(runningCancel.body.status).toBe('cancelled');

    audit = await gateway.store.listAudit({ limit: 1000 });
    samples = await scrape(observability);
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  it('settles every kind the test drove (the audit trail it is compared with)', () => {
    expect(audit.map((entry) => `${entry.endpoint} ${entry.outcome}`).sort()).toEqual([
      '/v1/batches completed',
      '/v1/batches refused_upstream',
      '/v1/responses cancelled_running',
      '/v1/responses completed',
      '/v1/responses not_sent',
    ]);
    expect(audit.find((entry) => entry.outcome === 'cancelled_running')!.costMicrosUsd).toBeGreaterThan(0);
  });

  it('the request that cancelled a running response names what the cancel committed on its log line', () => {
    const entry = audit.find((row) => row.outcome === 'cancelled_running')!;
    const line = gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find(
        (candidate) =>
          candidate.msg === 'request completed' &&
          candidate.request_id === runningCancel.headers.get('request-id'),
      );
    expect(line).toMatchObject({
      project: 'prj_a',
      attempt: entry.attemptId,
      outcome: 'cancelled_running',
      cost_micros_usd: entry.costMicrosUsd,
    });
  });

  it('a scrape equals the audit trail: cost, admissions, settlements by outcome, tokens, durations', () => {
    expectEqualToAudit(samples, audit);
    expect(
      total(samples, 'svc_settlements_total', {
        project: 'prj_a',
        alias: 'resp-slow',
        connection: 'sim-responses',
        outcome: 'cancelled_running',
      }),
    ).toBe(1);
    expect(
      total(samples, 'gen_ai_client_operation_duration_seconds_count', {
        gen_ai_operation_name: 'batches',
        gen_ai_provider_name: 'vendora',
        gen_ai_request_model: 'batch-model',
      }),
    ).toBe(2);
  });

  it('counts background jobs by kind and state', () => {
    expect(total(samples, 'svc_background_jobs_total', { kind: 'batch', state: 'enqueued' })).toBe(2);
    expect(total(samples, 'svc_background_jobs_total', { kind: 'batch', state: 'completed' })).toBe(2);
    // The completed batch polled at least twice: each poll released its job to run again.
    expect(
      total(samples, 'svc_background_jobs_total', { kind: 'batch', state: 'claimed' }),
    ).toBeGreaterThanOrEqual(
      2 + total(samples, 'svc_background_jobs_total', { kind: 'batch', state: 'released' }),
    );
    expect(total(samples, 'svc_background_jobs_running', { kind: 'batch' })).toBe(0);
    expect(total(samples, 'svc_background_jobs_total', { kind: 'response', state: 'enqueued' })).toBe(3);
    expect(
      total(samples, 'svc_background_jobs_total', { kind: 'response', state: 'claimed' }),
    ).toBeGreaterThanOrEqual(2);
    expect(total(samples, 'svc_background_jobs_total', { kind: 'sweep', state: 'claimed' })).toBeGreaterThan(
      0,
    );
  });

  it('a settlement that finds the attempt settled already reports and writes nothing', async () => {
    const runner = new AttemptRunner(gateway.ledger);
    const completed = audit.find(
      (entry) => entry.endpoint === '/v1/batches' && entry.outcome === 'completed',
    )!;
    await runner
      .held({ attemptId: completed.attemptId, createdAt: Date.now() })
      .abandon('batch_record_expired');
    expect(await gateway.store.listAudit({ limit: 1000 })).toEqual(audit);
    expectEqualToAudit(await scrape(observability), audit);
  });

  it('writes one log line per background settlement, with who spent what', () => {
    const lines = gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'background attempt settled');
    expect(lines).toHaveLength(audit.length);
    for (const entry of audit) {
      const logged = lines.find((candidate) => candidate.attempt === entry.attemptId);
      expect(logged).toMatchObject({
        project: entry.projectId,
        key: entry.keyId,
        alias: entry.alias,
        connection: entry.connection,
        outcome: entry.outcome,
        cost_micros_usd: entry.costMicrosUsd,
      });
    }
  });
});

describe('background attempts in the metrics (PostgreSQL, two replicas)', () => {
  it('the replica that settles an attempt reserved by another reports it, with the stored labels', async () => {
    const { createTestDatabase } = await import('../support/postgres-database.js');
    const database = await createTestDatabase();
    const sim = await startSimulator();
    const first = createObservability({ metrics: true, tracing: false });
    const second = createObservability({ metrics: true, tracing: false });
    const objects = mkdtempSync(join(tmpdir(), 'svc-bg-objects-'));
    let replicaA: TestGateway | undefined;
    let replicaB: TestGateway | undefined;
    try {
      replicaA = await startGateway(sim, first, 'postgres', database.url, objects);
      replicaB = await startGateway(sim, second, 'postgres', database.url, objects);
      const key = await replicaA.key('prj_a');
      sim.setBehaviour({ latencyMs: 10_000 }, { model: 'sim-slow' });
      const created = await call(replicaA.url, 'POST', '/v1/responses', {
        key,
        body: { model: 'resp-slow', input: 'hello', max_output_tokens: 32, background: true },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      await eventually(
        async () => (await call(replicaB!.url, 'GET', `/v1/responses/${created.body.id}`, { key })).body,
        (value) => value.status === 'in_progress',
      );
      const cancelled = await call(replicaB.url, 'POST', `/v1/responses/${created.body.id}/cancel`, { key });
      expect(cancelled.body.status, JSON.stringify(cancelled.body)).toBe('cancelled');
      const audit = await replicaB.store.listAudit({ limit: 100 });
      expect(audit).toHaveLength(1);
      const [entry] = audit as [AuditEntry];
      expect(entry.outcome).toBe('cancelled_running');

      const a = await scrape(first);
      const b = await scrape(second);
      const where = { project: 'prj_a', alias: 'resp-slow', connection: 'sim-responses' };
      // Admitted where reserved; settled (cost, outcome, duration) where settled; the sum is the audit trail.
      expect(
        total(a, 'svc_reservations_admitted_total', where) +
          total(b, 'svc_reservations_admitted_total', where),
      ).toBe(1);
      expect(total(b, 'svc_settlements_total', { ...where, outcome: 'cancelled_running' })).toBe(1);
      expect(total(a, 'svc_settlements_total')).toBe(0);
      expect(total(b, 'svc_cost_micros_usd_total', where)).toBe(entry.costMicrosUsd);
      expect(total(a, 'svc_cost_micros_usd_total')).toBe(0);
      expect(
        total(b, 'gen_ai_client_operation_duration_seconds_count', {
          gen_ai_operation_name: 'chat',
          gen_ai_provider_name: 'vendorb',
          gen_ai_request_model: 'resp-slow',
          connection: 'sim-responses',
        }),
      ).toBe(1);
      // PostgreSQL: both pools' use, read at scrape time.
      for (const pool of ['main', 'settle']) {
        const max = total(b, 'svc_store_pool_connections', { pool, state: 'max' });
        const open = total(b, 'svc_store_pool_connections', { pool, state: 'total' });
        const idle = total(b, 'svc_store_pool_connections', { pool, state: 'idle' });
        expect(max, pool).toBe(pool === 'main' ? 10 : 2);
        expect(open, pool).toBeGreaterThanOrEqual(1);
        expect(open, pool).toBeLessThanOrEqual(max);
        expect(idle, pool).toBeLessThanOrEqual(open);
        expect(total(b, 'svc_store_pool_connections', { pool, state: 'waiting' })).toBeGreaterThanOrEqual(0);
      }
    } finally {
      await replicaA?.close();
      await replicaB?.close();
      await sim.close();
      await database.drop();
      rmSync(objects, { recursive: true, force: true });
    }
  }, 60_000);
});
