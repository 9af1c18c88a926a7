/**
 * PostgreSQL unreachable or silent, seen by a real gateway process through a TCP fault proxy:
 * - paused (connections refused, live ones cut) and blackholed (accepted, never answered): every
 *   governance read and write answers 503 governance_unavailable within the configured timeouts,
 *   never 200 with empty data and never 500; /readyz answers 503, /healthz 200; a model call with
 *   a Run answers 503 run_governance_unavailable in the vendora dialect and the upstream receives
 *   nothing (never fail open);
 * - nothing attempted during the outage was written;
 * - once the proxy passes traffic again the same process recovers by itself, no restart.
 * The Gateway Key `cold` is first used during the outage, so its lookup (not a cached one) is
 * what fails there: that must be a 503 too, never a 401.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { SCOPES } from '../../src/config/schema.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import {
  type CallResult,
  call,
  eventually,
  expectSvcError,
  get,
  type Json,
  newIdempotencyKey,
  outcomeBody,
  post,
  simulatedVendora,
} from './support.js';

const CONNECT_TIMEOUT_MS = 1000;
const STATEMENT_TIMEOUT_MS = 1500;
/** node-postgres's client-side query_timeout is statement_timeout + 1 s (pool.ts). */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 1000;
const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };

describePostgres('reliability: PostgreSQL unreachable or timing out, behind a TCP fault proxy', () => {
  const folder = tempFolder('outage');
  const coldSecret = newKeySecret();
  let database: TestDatabase;
  let proxy: TcpProxy;
  let simulator: Simulator;
  let gateway: GatewayProcess;
  let key: string;
  let workUnit: Json;
  let run: Json;
  const measured: Record<string, number> = {};

  async function direct(text: string, values: unknown[] = []): Promise<Json[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  function messages(runId: string, secret = key, stream = false): Promise<CallResult> {
    return call(gateway.url, 'POST', '/v1/messages', {
      headers: { 'x-api-key': secret, 'vendora-version': '2023-06-01', 'x-svc-run-id': runId },
      body: { model: 'sim', max_tokens: 32, stream, messages: [{ role: 'user', content: 'Hello' }] },
    });
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    simulator = await startSimulator({ port: 0 });
    gateway = await startGatewayProcess({
      name: 'outage',
      folder: folder.path,
      environment: { SVC_RELIABILITY_DATABASE_URL: viaProxy.toString(), SVC_COLD_KEY: coldSecret },
      config: {
        store: {
          kind: 'postgres',
          postgres: {
            url_env: 'SVC_RELIABILITY_DATABASE_URL',
            connect_timeout_ms: CONNECT_TIMEOUT_MS,
            statement_timeout_ms: STATEMENT_TIMEOUT_MS,
          },
        },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        keys: [{ id: 'key_cold', project: 'prj_a', scopes: [...SCOPES], secret_env: 'SVC_COLD_KEY' }],
        ...simulatedVendora(simulator.url, PRICE, { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000 }),
      },
    });
    key = gateway.key;
    workUnit = (await post(gateway.url, key, '/svc/v1/work-units', {})).body;
    expect(workUnit.id).toMatch(/^wku_/);
    run = (
      await post(gateway.url, key, '/svc/v1/runs', {
        work_unit_id: workUnit.id,
        budget_micros_usd: 1_000_000,
      })
    ).body;
    expect(run.id).toMatch(/^run_/);
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await proxy?.close();
    await simulator?.close();
    await database?.drop();
    folder.remove();
    console.info(`[store outage] measured (ms): ${JSON.stringify(measured)}`);
  });

  beforeEach(async () => {
    simulator.clearRequests();
    // Healthy before each case: a model call on the Run goes through and reaches the upstream once.
    const healthy = await messages(run.id);
    expect(healthy.status, JSON.stringify(healthy.body)).toBe(200);
    expect(simulator.requests()).toHaveLength(1);
    simulator.clearRequests();
  });

  /** Everything a client can ask during an outage; each must be a fast, honest 503 (or 200 for /healthz). */
  async function duringOutage(label: string, limitMs: number): Promise<Record<string, string>> {
    const keys = {
      workUnit: newIdempotencyKey('outage-wu'),
      run: newIdempotencyKey('outage-run'),
      outcome: newIdempotencyKey('outage-out'),
    };
    const started = performance.now();
    const [
      readUnit,
      readRun,
      createUnit,
      createRun,
      report,
      closeRun,
      coldRead,
      ready,
      messageCall,
      streamCall,
      coldCall,
    ] = await Promise.all([
      get(gateway.url, key, `/svc/v1/work-units/${workUnit.id}`),
      get(gateway.url, key, `/svc/v1/runs/${run.id}`),
      post(gateway.url, key, '/svc/v1/work-units', {}, keys.workUnit),
      post(gateway.url, key, '/svc/v1/runs', { work_unit_id: workUnit.id }, keys.run),
      post(gateway.url, key, `/svc/v1/work-units/${workUnit.id}/outcomes`, outcomeBody(true), keys.outcome),
      post(gateway.url, key, `/svc/v1/runs/${run.id}/close`, {}),
      get(gateway.url, coldSecret, `/svc/v1/work-units/${workUnit.id}`),
      call(gateway.url, 'GET', '/readyz'),
      messages(run.id),
      messages(run.id, key, true),
      messages(run.id, coldSecret),
    ]);
    const all = {
      readUnit,
      readRun,
      createUnit,
      createRun,
      report,
      closeRun,
      coldRead,
      ready,
      messageCall,
      streamCall,
      coldCall,
    };
    measured[`${label}: slowest 503`] = Math.round(
      Math.max(...Object.values(all).map((result) => result.ms)),
    );
    measured[`${label}: all answered`] = Math.round(performance.now() - started);
    for (const [name, result] of Object.entries(all)) {
      expect(result.ms, `${name} took ${Math.round(result.ms)} ms`).toBeLessThan(limitMs);
    }
    for (const result of [readUnit, readRun, createUnit, createRun, report, closeRun, coldRead]) {
      expectSvcError(result, 503, 'governance_unavailable');
      expect(result.headers.get('retry-after')).toBe('1');
    }
    expect({ status: ready.status, body: ready.body }).toEqual({
      status: 503,
      body: { status: 'unavailable', store: 'postgres' },
    });
    for (const result of [messageCall, streamCall, coldCall]) {
      expect(result.status, JSON.stringify(result.body)).toBe(503);
      expect(result.headers.get('content-type')).toMatch(/^application\/json/);
      expect(result.body).toEqual({
        type: 'error',
        error: { type: 'api_error', message: expect.any(String), code: 'run_governance_unavailable' },
        request_id: expect.stringMatching(/^req_/),
      });
    }
    const health = await call(gateway.url, 'GET', '/healthz');
    expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
    expect(health.ms).toBeLessThan(1500);
    // Never fail open: nothing reached the upstream.
    expect(simulator.requests()).toEqual([]);
    expect(gateway.alive()).toBe(true);
    return keys;
  }

  /** After the proxy passes traffic again: the same process answers 200 by itself. */
  async function recovers(label: string, writesDuringOutage: Record<string, string>): Promise<void> {
    const started = performance.now();
    await eventually(
      async () =>
        (await get(gateway.url, key, `/svc/v1/work-units/${workUnit.id}`)).status === 200 ? true : undefined,
      10_000,
      'governance reads succeed again',
    );
    measured[`${label}: recovery`] = Math.round(performance.now() - started);
    expect(measured[`${label}: recovery`]).toBeLessThan(5000);
    expect((await call(gateway.url, 'GET', '/readyz')).status).toBe(200);

    // Nothing attempted during the outage was written: same Runs, no Outcome, the Run still active,
    // and the outage's Idempotency-Keys are unused (a retry creates, it does not replay).
    const view = await get(gateway.url, key, `/svc/v1/work-units/${workUnit.id}`);
    expect(view.body.runs.map((candidate: Json) => candidate.id)).toEqual([run.id]);
    expect(view.body.runs[0]).toMatchObject({ status: 'active', reserved_micros_usd: 0 });
    expect(view.body.outcomes).toEqual([]);
    expect(await direct('SELECT id FROM runs')).toEqual([{ id: run.id }]);
    expect(await direct('SELECT id FROM work_units')).toEqual([{ id: workUnit.id }]);
    expect(await direct("SELECT id FROM attempts WHERE state = 'reserved'")).toEqual([]);
    const retried = await post(gateway.url, key, '/svc/v1/work-units', {}, writesDuringOutage.workUnit);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    await direct('DELETE FROM idempotency WHERE response LIKE $1', [`%${retried.body.id}%`]);
    await direct('DELETE FROM work_units WHERE id = $1', [retried.body.id]);

    // Model calls on the Run work again, and reach the upstream once each.
    const afterwards = await messages(run.id, gateway.key);
    expect(afterwards.status, JSON.stringify(afterwards.body)).toBe(200);
    expect(simulator.requests()).toHaveLength(1);
  }

  it('paused (connection refused, live connections cut): fast 503s everywhere, nothing written, recovery without a restart', async () => {
    await proxy.pause();
    const writes = await duringOutage('paused', 5000);
    // Still down a little later: not a one-off answer.
    expectSvcError(await get(gateway.url, key, `/svc/v1/runs/${run.id}`), 503, 'governance_unavailable');
    await proxy.resume();
    await recovers('paused', writes);
  });

  it('the server kills the idle sessions (pg_terminate_backend): the process survives and the next requests are served', async () => {
    // Fill the pool with a few idle connections first.
    const warm = await Promise.all(
      Array.from({ length: 6 }, () => get(gateway.url, key, `/svc/v1/work-units/${workUnit.id}`)),
    );
    expect(warm.map((result) => result.status)).toEqual(Array(6).fill(200));
    const terminated = await direct(
      "SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'svc-gateway'",
    );
    expect(terminated.length).toBeGreaterThan(0);
    expect(terminated.every((row) => row.terminated === true)).toBe(true);
    // Each idle connection the server ended is a warning in the log, with the server's reason.
    const warning = await eventually(
      async () =>
        gateway
          .output()
          .split('\n')
          .find((line) => line.includes('an idle PostgreSQL connection failed')),
      5000,
      'the log line of a failed idle connection',
    );
    // The server's FATAL (57P01), or the socket's end when it closed before that was read.
    const logged = JSON.parse(warning);
    expect(logged.level).toBe(40);
    expect(logged.error.message).toMatch(
      /^(terminating connection due to administrator command|Connection terminated unexpectedly)$/,
    );
    // Only the message, code and severity: the failed client hung on the error holds the
    // connection parameters (a password, when the URL has one).
    expect(['code', 'message', 'severity']).toEqual(expect.arrayContaining(Object.keys(logged.error)));
    await new Promise((done) => setTimeout(done, 200));
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => get(gateway.url, key, `/svc/v1/runs/${run.id}`)),
      call(gateway.url, 'GET', '/readyz'),
      messages(run.id),
    ]);
    expect(results.map((result) => result.status)).toEqual(Array(8).fill(200));
    expect(gateway.alive()).toBe(true);
  });

  it('blackholed (accepted, never answered): connect and query timeouts become 503 within the configured bounds, then recovery', async () => {
    // Fewer pooled connections than the outage's concurrent requests, whatever the cases before
    // left in the pool (ten idle ones would serve all but one, which would queue): the sessions are
    // ended, then one call pools a connection again. During the outage that one goes silent (query
    // timeout) and the others must connect (held unanswered: connect timeout).
    await direct(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'svc-gateway'",
    );
    await new Promise((done) => setTimeout(done, 200));
    const pooled = await messages(run.id);
    expect(pooled.status, JSON.stringify(pooled.body)).toBe(200);
    simulator.clearRequests();
    proxy.blackhole();
    // The slowest path: a pooled connection that went silent is given up after query_timeout.
    const writes = await duringOutage('blackhole', QUERY_TIMEOUT_MS + 2500);
    // Both bounds were exercised: new connections were held unanswered (connect timeout) while
    // pooled ones went silent (query timeout).
    expect(proxy.held).toBeGreaterThan(0);
    expect(measured['blackhole: slowest 503']).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS);
    await proxy.resume();
    await recovers('blackhole', writes);
  });
});
