/**
 * What the events outbox costs a model call that crosses no threshold (docs/events.md, "Cost").
 * The outbox touches a call only in the ledger: its reservation compares the Run's and the caps'
 * figures with the configured thresholds, in the same statement or transaction. So this measures
 * the ledger part of a call, reserve + settle on a Run, at concurrency 64, with thresholds
 * configured (events.run_budget_thresholds [0.5, 0.8, 1]) and without (an empty list: nothing is
 * compared), on Runs whose budget no call comes near: no event is ever written.
 *
 * Rounds alternate (with, without, with, ...) on the same store so a busy machine disturbs both
 * sides alike; it prints calls/s and CPU per call (this process plus, on PostgreSQL, the server's
 * backends as pg_stat_statements would not be there: the wall-clock throughput is the figure) per
 * round, their medians and the ratio with/without.
 *
 *   node --import tsx bench/outbox-cost.ts
 *   BENCH_STORE=sqlite|postgres (default both) BENCH_ROUNDS=6 BENCH_CALLS=6000
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres (admin URL; a throw-away
 *   database is created and dropped)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { newTimeOrderedId } from '../src/lib/ids.js';
import type { EventThresholds } from '../src/money/thresholds.js';
import type { Store } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { createStoreRun } from './store-run.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CALLS = Number(process.env.BENCH_CALLS ?? 6000);
const CONCURRENCY = 64;
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WITH: EventThresholds = { run: [0.5, 0.8, 1], caps: [0.5, 0.8, 1] };
const WITHOUT: EventThresholds = { run: [], caps: [] };
const iso = (milliseconds: number) => new Date(milliseconds).toISOString();

/** CALLS reserve + settle pairs at concurrency 64 on `runId`; calls/s and CPU microseconds per call. */
async function round(store: Store, runId: string, thresholds: EventThresholds) {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < CALLS) {
      next++;
      const now = Date.now();
      const attemptId = newTimeOrderedId('att', now);
      await store.reserve({
        attemptId,
        projectId: 'prj_bench',
        keyId: 'key_bench',
        runId,
        reservationMicrosUsd: 5000,
        eventThresholds: thresholds,
        now,
        createdAt: iso(now),
        leaseExpiresAt: iso(now + 900_000),
        owner: 'bench',
        endpoint: '/v1/messages',
        alias: 'bench',
        connection: 'sim',
        profile: 'vendora.messages.2023-06-01',
        upstreamModel: 'sim-1',
      });
      await store.settle({
        attemptId,
        state: 'settled',
        costMicrosUsd: 1234,
        usage: { inputTokens: 100, outputTokens: 50, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
        outcome: 'completed',
        httpStatus: 200,
        durationMs: 3,
        settledAt: iso(Date.now()),
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: CALLS / seconds, cpuMicrosPerCall: (used.user + used.system) / CALLS };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/**
 * A new Run for each round, its id later than every earlier one: each round's audit rows then go to
 * the right-hand end of the indexes that lead with run_id, whichever side it measures. (With one
 * Run per side, the side whose id sorts first inserted into the middle of those indexes, splitting
 * pages, and read several per cent slower for that alone.)
 */
async function freshRun(store: Store): Promise<string> {
  const id = newTimeOrderedId('run', Date.now());
  await createStoreRun(store, { projectId: 'prj_bench', runId: id, workUnitId: `wku_${id}` });
  return id;
}

async function measure(name: string, store: Store): Promise<void> {
  // Warm-up: both sides, untimed.
  await round(store, await freshRun(store), WITH);
  await round(store, await freshRun(store), WITHOUT);
  const results = {
    with: [] as Array<{ callsPerSecond: number; cpuMicrosPerCall: number }>,
    without: [] as Array<{ callsPerSecond: number; cpuMicrosPerCall: number }>,
  };
  for (let index = 0; index < ROUNDS; index++) {
    // Alternate which side goes first, so neither always runs on the warmer (or busier) half.
    const order = index % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
    for (const side of order) {
      const figures = await round(store, await freshRun(store), side === 'with' ? WITH : WITHOUT);
      results[side].push(figures);
      console.log(
        `${name} round ${index + 1} ${side.padEnd(7)} ${figures.callsPerSecond.toFixed(0).padStart(6)} calls/s  ${figures.cpuMicrosPerCall.toFixed(1).padStart(6)} µs CPU/call (this process)`,
      );
    }
  }
  const withRate = median(results.with.map((each) => each.callsPerSecond));
  const withoutRate = median(results.without.map((each) => each.callsPerSecond));
  const withCpu = median(results.with.map((each) => each.cpuMicrosPerCall));
  const withoutCpu = median(results.without.map((each) => each.cpuMicrosPerCall));
  console.log(
    `${name} median: with thresholds ${withRate.toFixed(0)} calls/s, ${withCpu.toFixed(1)} µs CPU/call; ` +
      `without ${withoutRate.toFixed(0)} calls/s, ${withoutCpu.toFixed(1)} µs CPU/call; ` +
      `ratio with/without: throughput ${(withRate / withoutRate).toFixed(3)}, CPU ${(withCpu / withoutCpu).toFixed(3)}`,
  );
}

async function main() {
  const only = process.env.BENCH_STORE;
  if (only === undefined || only === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'svc-outbox-bench-'));
    const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
    await store.migrate();
    try {
      await measure('sqlite', store);
    } finally {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }
  if (only === undefined || only === 'postgres') {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const database = `svc_outbox_bench_${process.pid}`;
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const store = new PostgresStore({ connectionString: url.toString() });
    try {
      await store.migrate();
      await measure('postgres', store);
    } finally {
      await store.close();
      await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
      await admin.end();
    }
  }
}

await main();
