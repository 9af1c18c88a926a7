/**
 * The ledger across process deaths and shutdowns: streaming model calls attached to a Run are open
 * (the simulated upstream stalls mid-stream) when the gateway process dies or is stopped. Their
 * reservations must never be silently released (the upstream may have billed):
 * - SQLite (one process): the next process commits each of them in full at start-up and counts it
 *   in unknown_attempts, long before the attempts' leases (15 min) would have run out;
 * - SIGTERM: the drain is bounded; streams still open are cut and settled (unknown) before exit;
 * - PostgreSQL (replicas: a start cannot tell a dead owner from a live one): the lease reaper of
 *   any process commits them once their lease has passed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import {
  freePort,
  type GatewayProcess,
  type GatewayProcessOptions,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { sqliteInspector } from './store-inspection.js';
import { call, eventually, get, type Json, post, simulatedVendora } from './support.js';

const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000, request_fee_micros: 7 };
const STREAMS = 4;

/** Opens a streaming call on the Run and resolves once its first bytes arrived (the call is admitted and streaming). */
async function openStream(
  gateway: GatewayProcess,
  runId: string,
  index: number,
): Promise<{ done: Promise<string> }> {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': gateway.key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      'x-svc-run-id': runId,
    },
    body: JSON.stringify({
      model: 'sim',
      max_tokens: 100 * (index + 1),
      stream: true,
      messages: [{ role: 'user', content: `Stream number ${index}: ${'x'.repeat(50 * index)}` }],
    }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  expect(new TextDecoder().decode(first.value)).toContain('message_start');
  // The rest of the stream ends when the gateway dies; how it ends is not the point here.
  const done = (async () => {
    try {
      while (!(await reader.read()).done) {
        // drain
      }
      return 'ended';
    } catch {
      return 'cut';
    }
  })();
  return { done };
}

function simulatedModel(simulator: Simulator): Record<string, unknown> {
  return {
    // The stall must outlive the test: only the kill (or the drain deadline) may end these streams.
    ...simulatedVendora(simulator.url, PRICE, { connect_ms: 2000, first_byte_ms: 60_000, idle_ms: 60_000 }),
  };
}

describe('reliability: the ledger across process deaths and shutdowns [sqlite]', () => {
  const folder = tempFolder('ledger-crash');
  const path = join(folder.path, 'svc.db');
  const inspector = sqliteInspector(path);
  let simulator: Simulator;
  let options: GatewayProcessOptions;
  let gateway: GatewayProcess;

  let metricsPort: number;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0 });
    metricsPort = await freePort();
    options = {
      name: 'ledger',
      folder: folder.path,
      config: {
        logging: { level: 'warn' },
        // The whole process's metrics (a key's /metrics shows its own Project only).
        metrics: { listen: { host: '127.0.0.1', port: metricsPort } },
        store: { kind: 'sqlite', sqlite: { path } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        ledger: { lease_seconds: 900, reaper_interval_seconds: 600 },
        ...simulatedModel(simulator),
      },
    };
    gateway = await startGatewayProcess(options);
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await simulator?.close();
    folder.remove();
  });

  it('the reservations of the killed calls are committed in full at the next start: reserved 0, unknown_attempts = calls, committed = their sum', async () => {
    const unit = (await post(gateway.url, gateway.key, '/svc/v1/work-units', {})).body;
    const created = await post(gateway.url, gateway.key, '/svc/v1/runs', {
      work_unit_id: unit.id,
      budget_micros_usd: 2_000_000,
    });
    expect(created.status).toBe(201);
    const runId = created.body.id as string;
    simulator.setBehaviour({ stallAfterEvents: 2 });

    const streams = [];
    for (let index = 0; index < STREAMS; index++) streams.push(await openStream(gateway, runId, index));
    expect(simulator.requests()).toHaveLength(STREAMS);

    const before = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body as Json;
    const reservedRows = await inspector.rows(
      `SELECT id, reservation FROM attempts WHERE run_id = '${runId}' AND state = 'reserved'`,
    );
    expect(reservedRows).toHaveLength(STREAMS);
    const reservations = reservedRows.map((row) => Number(row.reservation));
    const sum = reservations.reduce((total, amount) => total + amount, 0);
    expect(new Set(reservations).size).toBe(STREAMS); // different max_tokens, different reservations
    expect(before).toMatchObject({
      reserved_micros_usd: sum,
      committed_micros_usd: 0,
      unknown_attempts: 0,
      remaining_micros_usd: 2_000_000 - sum,
    });
    expect(sum).toBeGreaterThan(0);

    expect(await gateway.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const endings = await Promise.all(streams.map((stream) => stream.done));
    expect(endings.every((ending) => ending === 'cut' || ending === 'ended')).toBe(true);
    // Nothing settled them after the kill: the store still holds the reservations.
    expect(
      await inspector.rows(
        `SELECT CAST(count(*) AS INTEGER) AS n FROM attempts WHERE run_id = '${runId}' AND state = 'reserved'`,
      ),
    ).toEqual([{ n: STREAMS }]);

    simulator.reset();
    gateway = await startGatewayProcess(options);
    const after = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body as Json;
    expect(after).toMatchObject({
      reserved_micros_usd: 0,
      committed_micros_usd: sum,
      unknown_attempts: STREAMS,
      remaining_micros_usd: 2_000_000 - sum,
      budget_state: 'available',
      status: 'active',
    });
    const audit = await inspector.rows(
      `SELECT attempt_id, state, reservation, cost, outcome FROM audit WHERE run_id = '${runId}' ORDER BY attempt_id`,
    );
    expect(audit).toEqual(
      reservedRows
        .map((row) => ({
          attempt_id: row.id,
          state: 'unknown',
          reservation: row.reservation,
          cost: row.reservation,
          outcome: 'lease_expired',
        }))
        .sort((left, right) => String(left.attempt_id).localeCompare(String(right.attempt_id))),
    );
    // The attempt rows carry the outcome too (migration 4).
    const outcomes = await inspector.rows(`SELECT DISTINCT outcome FROM attempts WHERE run_id = '${runId}'`);
    expect(outcomes).toEqual([{ outcome: 'lease_expired' }]);
    expect(gateway.output()).toMatch(/"reaped":4[,}].*previous process/);
    // The restarted process reports the reaper's commits like any settlement: its cost counter and
    // its lease_expired settlements equal what the audit trail committed.
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const summed = (name: string, filter: string) =>
      scraped
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) && line.includes(filter))
        .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(summed('svc_cost_micros_usd_total', 'project=')).toBe(sum);
    expect(summed('svc_settlements_total', 'outcome="lease_expired"')).toBe(STREAMS);
    expect(scraped).toMatch(new RegExp(`^svc_lease_expired_attempts_total ${STREAMS}$`, 'm'));

    // The Run keeps working after the recovery: a new call settles normally on top.
    const next = await call(gateway.url, 'POST', '/v1/messages', {
      headers: { 'x-api-key': gateway.key, 'vendora-version': '2023-06-01', 'x-svc-run-id': runId },
      body: { model: 'sim', max_tokens: 16, messages: [{ role: 'user', content: 'Hello again' }] },
    });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    const last = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body as Json;
    expect(last.unknown_attempts).toBe(STREAMS);
    expect(last.reserved_micros_usd).toBe(0);
    expect(last.committed_micros_usd).toBeGreaterThan(sum);
  });

  async function runWithStalledStream(): Promise<{
    runId: string;
    reservation: number;
    stream: { done: Promise<string> };
  }> {
    const unit = (await post(gateway.url, gateway.key, '/svc/v1/work-units', {})).body;
    const runId = (await post(gateway.url, gateway.key, '/svc/v1/runs', { work_unit_id: unit.id })).body
      .id as string;
    simulator.setBehaviour({ stallAfterEvents: 2 });
    const stream = await openStream(gateway, runId, 1);
    const reservation = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body
      .reserved_micros_usd as number;
    expect(reservation).toBeGreaterThan(0);
    return { runId, reservation, stream };
  }

  it('SIGTERM with a stream still open: the drain is bounded (10 s), the cut stream settles as unknown before the exit, the lock is released', async () => {
    const { runId, reservation, stream } = await runWithStalledStream();
    const started = performance.now();
    const exit = await gateway.stop(20_000);
    const drainMs = performance.now() - started;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(drainMs).toBeGreaterThan(9_000);
    expect(drainMs).toBeLessThan(15_000);
    expect(await stream.done).toMatch(/cut|ended/);
    expect(gateway.output()).toContain('closing their connections');
    // Settled by the stopping process itself (not left to the next start), and the lock file is gone.
    expect(await inspector.rows(`SELECT state, cost FROM attempts WHERE run_id = '${runId}'`)).toEqual([
      { state: 'unknown', cost: reservation },
    ]);
    expect(existsSync(`${path}.lock.pid`)).toBe(false); // released on shutdown: the owner file is removed
    simulator.reset();
    gateway = await startGatewayProcess(options);
    expect((await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body).toMatchObject({
      reserved_micros_usd: 0,
      committed_micros_usd: reservation,
      unknown_attempts: 1,
    });
  }, 40_000);

  it('a second SIGTERM during the drain exits at once; the next start commits the open reservation', async () => {
    const { runId, reservation, stream } = await runWithStalledStream();
    process.kill(gateway.pid, 'SIGTERM');
    await new Promise((done) => setTimeout(done, 300));
    const started = performance.now();
    process.kill(gateway.pid, 'SIGTERM');
    expect(await gateway.exited).toEqual({ code: 1, signal: null });
    expect(performance.now() - started).toBeLessThan(2000);
    await stream.done;
    simulator.reset();
    gateway = await startGatewayProcess(options);
    expect((await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body).toMatchObject({
      reserved_micros_usd: 0,
      committed_micros_usd: reservation,
      unknown_attempts: 1,
    });
  });
});

describePostgres('reliability: the ledger across process deaths [postgres]', () => {
  const folder = tempFolder('ledger-crash-pg');
  const LEASE_SECONDS = 5;
  let database: TestDatabase;
  let simulator: Simulator;
  let options: GatewayProcessOptions;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    simulator = await startSimulator({ port: 0 });
    options = {
      name: 'ledger-pg',
      folder: folder.path,
      environment: { SVC_RELIABILITY_DATABASE_URL: database.url },
      config: {
        store: { kind: 'postgres', postgres: { url_env: 'SVC_RELIABILITY_DATABASE_URL' } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        ledger: { lease_seconds: LEASE_SECONDS, reaper_interval_seconds: 1 },
        ...simulatedModel(simulator),
      },
    };
    gateway = await startGatewayProcess(options);
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await simulator?.close();
    await database?.drop();
    folder.remove();
  });

  it('the reservations of a killed replica stay held until their lease passes, then are committed in full by the reaper', async () => {
    const unit = (await post(gateway.url, gateway.key, '/svc/v1/work-units', {})).body;
    const runId = (await post(gateway.url, gateway.key, '/svc/v1/runs', { work_unit_id: unit.id })).body
      .id as string;
    simulator.setBehaviour({ stallAfterEvents: 2 });
    const streams = [await openStream(gateway, runId, 0), await openStream(gateway, runId, 2)];
    const sum = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body
      .reserved_micros_usd as number;
    expect(sum).toBeGreaterThan(0);
    const killedAt = performance.now();
    expect(await gateway.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    await Promise.all(streams.map((stream) => stream.done));
    simulator.reset();

    gateway = await startGatewayProcess(options);
    const held = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body as Json;
    const committed = await eventually(
      async () => {
        const run = (await get(gateway.url, gateway.key, `/svc/v1/runs/${runId}`)).body as Json;
        return run.reserved_micros_usd === 0 ? run : undefined;
      },
      (LEASE_SECONDS + 5) * 1000,
      "the reaper commits the dead replica's reservations",
    );
    const reapedAfterMs = performance.now() - killedAt;
    // Never released in between: either still held, or already committed, by the first read after the start.
    expect(held.committed_micros_usd + held.reserved_micros_usd).toBe(sum);
    expect(committed).toMatchObject({
      committed_micros_usd: sum,
      unknown_attempts: 2,
      remaining_micros_usd: 1_000_000 - sum,
    });
    // Not before the lease (renewed while streaming) could have passed.
    expect(reapedAfterMs).toBeGreaterThan((LEASE_SECONDS - 1) * 1000);
    console.info(
      `[ledger postgres] reservations committed by the lease reaper ${Math.round(reapedAfterMs)} ms after the SIGKILL (lease ${LEASE_SECONDS} s)`,
    );
  });
});
