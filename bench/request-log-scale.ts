/**
 * The request log and the reports at 10,000,000 attempts on PostgreSQL (issue 40, item 5).
 *
 * Creates its own database, applies the migrations, loads 10 M settled attempts (audit rows) over
 * 30 days with a realistic spread (two Projects, 40 keys, 8 aliases, 5 connections, Runs and Work
 * Units with metadata, tags on most calls, outcomes, HTTP statuses, retries sharing a call) in bulk
 * SQL (generate_series, in chunks with progress), builds the migrations' audit indexes after the
 * load (faster than maintaining them row by row), folds the rollups, then times through the real
 * HTTP routes (store, use case, rendering; a loopback server read by fetch) the log's pages, a
 * detail, the spend report and cost per Outcome: median and p95 of several runs each. Drops its
 * database at the end (--keep leaves it; --database NAME times a kept one again, no load).
 *
 *   node --import tsx bench/request-log-scale.ts [--attempts N] [--keep] [--database NAME]
 *
 * Target (docs/performance.md): the log's first page and a filtered page under 100 ms.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Caller } from '../src/governance/service.js';
import { registerReportRoutes } from '../src/http/report-routes.js';
import type { Store } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';

const argument = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
};

const ATTEMPTS = Number(argument('--attempts') ?? process.env.BENCH_ATTEMPTS ?? 10_000_000);
const CHUNK = 500_000;
/** Consecutive attempts of one Run (or of one stretch of calls without a Run). */
const BLOCK = 16;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const END = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
const START = END - 30 * DAY_MS;
const PROJECT = 'prj_bench';
const OTHER_PROJECT = 'prj_other';
const caller: Caller = { projectId: PROJECT, keyId: 'key_bench', scopes: ['governance:read'] };

/**
 * Column expressions of attempt number `i` (bigint). Block b = i / 16: 7 blocks in 10 are a Run's
 * (Run `run_<b>`, two Runs per Work Unit `wku_<b / 2>`), the others calls without a Run; one block
 * in 20 belongs to another Project. Pseudo-random spreads come from hashint8 (stable per i).
 */
const block = (i: string) => `(${i} / ${BLOCK})`;
const hash = (i: string, salt: number) => `abs(hashint8(${i} * 31 + ${salt}))`;
const withRun = (i: string) => `(${block(i)} % 10 < 7)`;
const A = {
  project: (i: string) => `CASE WHEN ${block(i)} % 20 = 19 THEN '${OTHER_PROJECT}' ELSE '${PROJECT}' END`,
  key: (i: string) => `'key_' || (${hash(block(i), 1)} % 40)`,
  alias: (i: string) => `'alias-' || (${hash(i, 2)} % 8)`,
  connection: (i: string) => `'conn-' || (${hash(i, 3)} % 5)`,
  model: (i: string) => `'model-' || (${hash(i, 2)} % 8) || '-' || (${hash(i, 3)} % 5 % 2)`,
  run: (i: string) => `CASE WHEN ${withRun(i)} THEN 'run_' || ${block(i)} END`,
  workUnit: (i: string) => `CASE WHEN ${withRun(i)} THEN 'wku_' || (${block(i)} / 2) END`,
  /** 94% completed, 5% refused upstream (429, 500, 400), 1% not sent, 0.5% unknown. */
  outcome: (i: string) => `CASE WHEN ${hash(i, 4)} % 200 = 0 THEN 'unknown'
    WHEN ${hash(i, 4)} % 100 < 5 THEN 'refused_upstream' WHEN ${hash(i, 4)} % 100 < 6 THEN 'not_sent'
    ELSE 'completed' END`,
  /** Tags on 80% of calls: team (per key), feature (25), env. */
  tags: (i: string) => `CASE WHEN ${hash(i, 5)} % 5 = 0 THEN NULL ELSE jsonb_build_object(
    'team', 'team-' || (${hash(block(i), 1)} % 40 % 8), 'feature', 'feature-' || (${hash(i, 6)} % 25),
    'env', CASE WHEN ${hash(i, 7)} % 10 = 0 THEN 'staging' ELSE 'prod' END) END`,
  /** A Run's attempts carry its Work Unit's metadata (customer of 500, plan of 4) and the Run's stage. */
  metadata: (i: string) => `CASE WHEN ${withRun(i)} THEN jsonb_build_object(
    'customer', 'cust-' || (${hash(`${block(i)} / 2`, 8)} % 500), 'plan', 'plan-' || (${hash(`${block(i)} / 2`, 8)} % 4),
    'stage', 'stage-' || (${block(i)} % 2)) END`,
};

/** Fills work_units, runs and outcomes for the attempts' Runs (metadata as the audit rows carry it). */
async function loadGovernance(client: pg.Client): Promise<void> {
  const blocks = Math.ceil(ATTEMPTS / BLOCK);
  const blockMs = (30 * DAY_MS) / blocks;
  const time = (ms: string) => `to_timestamp((${ms}) / 1000.0)`;
  await client.query(`INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions, run_count, metadata)
    SELECT 'wku_' || u, ${A.project(`u * 2 * ${BLOCK}`)}, CASE WHEN u % 3 = 0 THEN 'open' ELSE 'closed' END,
      ${time(`${START} + u * 2 * ${blockMs}`)}, CASE WHEN u % 3 = 0 THEN NULL ELSE ${time(`${START} + u * 2 * ${blockMs} + 3600000`)} END,
      '[{"id":"odef_resolved","version":1}]', 2,
      jsonb_build_object('customer', 'cust-' || (${hash('u', 8)} % 500), 'plan', 'plan-' || (${hash('u', 8)} % 4))
    FROM generate_series(0::bigint, ${Math.ceil(blocks / 2) - 1}) u
    WHERE (u * 2) % 10 < 7 OR (u * 2 + 1) % 10 < 7`);
  await client.query(`INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at, metadata)
    SELECT 'run_' || b, w.project_id, w.id, 1000000000000, 'active', w.created_at, '2099-01-01T00:00:00Z',
      jsonb_build_object('stage', 'stage-' || (b % 2))
    FROM generate_series(0::bigint, ${blocks - 1}) b JOIN work_units w ON w.id = 'wku_' || (b / 2)
    WHERE b % 10 < 7`);
  await client.query(`INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value,
      reporter_key_id, observed_at, ingested_at, revision, governance_sequence, provisional, is_head)
    SELECT 'out_' || substr(id, 5), project_id, id, 'odef_resolved', 1,
      CASE WHEN substr(id, 5)::bigint % 5 = 3 THEN 'false' ELSE 'true' END, 'key_0', created_at, created_at, 1,
      substr(id, 5)::bigint + 1, status = 'open', true
    FROM work_units WHERE substr(id, 5)::bigint % 5 <> 4`);
}

/** One chunk of audit rows [from, to): what settlements write (migration 11's columns included). */
function auditChunkSql(from: number, to: number): string {
  const step = (30 * DAY_MS) / ATTEMPTS;
  const created = `to_timestamp((${START} + i * ${step}) / 1000.0)`;
  return `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model,
      state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome,
      http_status, duration_ms, overran, created_at, settled_at, work_unit_id, tags, metadata, route, call_id, first_byte_ms,
      upstream_request_id, trace_id)
    SELECT 'att_' || i, ${A.project('i')}, ${A.key('i')}, ${A.run('i')}, 'messages', ${A.alias('i')}, ${A.connection('i')},
      'vendora-messages', ${A.model('i')},
      CASE outcome WHEN 'unknown' THEN 'unknown' WHEN 'not_sent' THEN 'released' ELSE 'settled' END, 6000,
      CASE WHEN outcome = 'unknown' THEN 6000 WHEN outcome = 'completed' THEN 100 + ${hash('i', 9)} % 5000 ELSE 0 END,
      CASE WHEN outcome = 'completed' THEN 300 + ${hash('i', 10)} % 3000 END,
      CASE WHEN outcome = 'completed' THEN 20 + ${hash('i', 11)} % 800 END,
      CASE WHEN outcome = 'completed' THEN 0 END, CASE WHEN outcome = 'completed' THEN ${hash('i', 12)} % 2000 END,
      outcome, CASE outcome WHEN 'completed' THEN 200 WHEN 'refused_upstream' THEN (ARRAY[429, 500, 400])[1 + i % 3] END,
      200 + ${hash('i', 13)} % 20000, false, ${created}, ${created} + interval '2 seconds', ${A.workUnit('i')}, ${A.tags('i')},
      ${A.metadata('i')}, jsonb_build_object('index', 0, 'tried', '[]'::jsonb, 'skipped', '[]'::jsonb),
      'call_' || i, 50 + ${hash('i', 14)} % 2000, 'req_' || i, lpad(to_hex(i), 32, '0')
    FROM (SELECT i, ${A.outcome('i')} AS outcome FROM generate_series(${from}::bigint, ${to - 1}) i) g`;
}

/**
 * The audit indexes the migrations created (those of no constraint), dropped before the load and
 * built again after it from their own definitions.
 */
async function auditIndexes(client: pg.Client): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit'
       AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'audit'::regclass)`,
  );
  return rows.map((row) => ({ name: row.indexname, definition: row.indexdef }));
}

async function load(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("SET maintenance_work_mem = '512MB'");
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0).padStart(4);
  await loadGovernance(client);
  console.log(`load ${seconds()} s  Work Units, Runs, Outcomes`);
  const indexes = await auditIndexes(client);
  for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
  for (let from = 0; from < ATTEMPTS; from += CHUNK) {
    const to = Math.min(ATTEMPTS, from + CHUNK);
    await client.query(auditChunkSql(from, to));
    console.log(
      `load ${seconds()} s  audit rows ${to.toLocaleString('en')} / ${ATTEMPTS.toLocaleString('en')}`,
    );
  }
  for (const index of indexes) {
    await client.query(index.definition);
    console.log(`load ${seconds()} s  index ${index.name}`);
  }
  // Each Run's committed and unknown attempts as the ledger keeps them (cost per Outcome reads them).
  await client.query(`UPDATE runs SET committed = s.spend, unknown_attempts = s.unknown
    FROM (SELECT run_id, SUM(cost) AS spend, COUNT(*) FILTER (WHERE state = 'unknown') AS unknown
          FROM audit WHERE run_id IS NOT NULL GROUP BY run_id) s
    WHERE s.run_id = runs.id`);
  console.log(`load ${seconds()} s  Runs' committed`);
  // What autovacuum does after a bulk load: statistics and the visibility map.
  await client.query('VACUUM ANALYZE');
  console.log(`load ${seconds()} s  VACUUM ANALYZE`);
  await client.end();
}

export type { FastifyInstance, Store };

/** Median and p95 (nearest rank) of a list of times. */
function percentile(times: readonly number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The routes under test on a loopback server, the guard answering the bench's caller: a timed
 * request is the whole answer a client waits for (store reads, use case, JSON, the body read).
 */
async function server(store: Store): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ logger: false });
  const deps = { guard: async () => caller, store, clock: { now: () => END }, pendingFor: () => 0 };
  registerReportRoutes(app, deps);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url };
}

interface Case {
  name: string;
  path: string;
  runs: number;
}

async function measure(url: string, cases: readonly Case[]): Promise<void> {
  for (const item of cases) {
    const times: number[] = [];
    let status = 0;
    let bytes = 0;
    for (let run = 0; run < item.runs; run++) {
      const started = performance.now();
      const response = await fetch(`${url}${item.path}`);
      bytes = (await response.arrayBuffer()).byteLength;
      times.push(performance.now() - started);
      status = response.status;
    }
    if (status !== 200) throw new Error(`${item.path}: HTTP ${status}`);
    const median = percentile(times, 50).toFixed(1).padStart(8);
    const p95 = percentile(times, 95).toFixed(1).padStart(8);
    console.log(
      `${item.name.padEnd(52)} median ${median} ms   p95 ${p95} ms   (${item.runs} runs, ${bytes} B)`,
    );
  }
}

/** Times one store read (the real store code, no HTTP): median and p95 of `runs`. */
async function measureStore(
  name: string,
  runs: number,
  read: () => Promise<unknown[] | unknown>,
): Promise<void> {
  const times: number[] = [];
  let size = 0;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const result = await read();
    times.push(performance.now() - started);
    size = Array.isArray(result) ? result.length : result === undefined ? 0 : 1;
  }
  if (size === 0) throw new Error(`${name}: nothing found`);
  const median = percentile(times, 50).toFixed(1).padStart(8);
  const p95 = percentile(times, 95).toFixed(1).padStart(8);
  console.log(`${name.padEnd(52)} median ${median} ms   p95 ${p95} ms   (${runs} runs, ${size} rows)`);
}

/** The log's reads through the store's request log (Store.requestLog), as the log's routes call them. */
async function timeLog(store: Store): Promise<void> {
  const log = store.requestLog;
  const page = { projectId: PROJECT, limit: 50 };
  const iso = (ms: number) => new Date(ms).toISOString();
  const RUNS = 20;
  await measureStore('log: first page (50)', RUNS, () => log.list(page));
  await measureStore('log: key + 1-day range', RUNS, () =>
    log.list({ ...page, keyId: 'key_7', from: iso(END - 8 * DAY_MS), to: iso(END - 7 * DAY_MS) }),
  );
  await measureStore('log: tag team=team-3', RUNS, () => log.list({ ...page, tags: { team: 'team-3' } }));
  await measureStore('log: tags env=staging, feature=feature-7', RUNS, () =>
    log.list({ ...page, tags: { env: 'staging', feature: 'feature-7' } }),
  );
  await measureStore('log: metadata customer=cust-42', RUNS, () =>
    log.list({ ...page, metadata: { customer: 'cust-42' } }),
  );
  await measureStore('log: run_id', RUNS, () =>
    log.list({ ...page, runId: `run_${Math.floor(ATTEMPTS / BLOCK / 2 / 20) * 20}` }),
  );
  await measureStore('log: work_unit_id', RUNS, () =>
    log.list({ ...page, workUnitId: `wku_${Math.floor(ATTEMPTS / BLOCK / 4 / 10) * 10}` }),
  );
  await measureStore('log: outcome refused_upstream + http_status 429', RUNS, () =>
    log.list({ ...page, outcome: 'refused_upstream', httpStatus: 429 }),
  );
  await measureStore('log: outcome unknown (0.5%), 1-day range', RUNS, () =>
    log.list({ ...page, outcome: 'unknown', from: iso(END - 8 * DAY_MS), to: iso(END - 7 * DAY_MS) }),
  );
  // A deep keyset page: the position 15 days back (a client paging through half the month).
  const deep = await log.list({ ...page, to: iso(END - 15 * DAY_MS), limit: 1 });
  const after = { createdAt: deep[0]!.createdAt, id: deep[0]!.attemptId };
  await measureStore('log: keyset page 15 days deep', RUNS, () => log.list({ ...page, after }));
  await measureStore('log: keyset page 15 days deep, tag team=team-3', RUNS, () =>
    log.list({ ...page, after, tags: { team: 'team-3' } }),
  );
  const detail = `att_${Math.floor(ATTEMPTS / 2 / 320) * 320}`;
  await measureStore('log: one attempt (detail)', RUNS, () => log.get(PROJECT, detail));
}

async function timeAll(store: Store): Promise<void> {
  await store.syncDefinitions([
    {
      projectId: PROJECT,
      id: 'odef_resolved',
      version: 1,
      kind: 'BOOLEAN',
      allowedValues: [true, false],
      enabled: true,
    },
  ]);
  await timeLog(store);
  const folding = performance.now();
  await store.reports.fold();
  console.log(
    `fold of the rollups (backlog after the load) ${((performance.now() - folding) / 1000).toFixed(1)} s`,
  );
  const { app, url } = await server(store);
  try {
    const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
    const range = `from=${iso(START)}&to=${iso(END)}`;
    const reports: Case[] = [
      {
        name: 'spend by day, alias (30 days)',
        path: `/svc/v1/reports/spend?${range}&group_by=day,alias`,
        runs: 5,
      },
      {
        name: 'spend by tag.team (30 days)',
        path: `/svc/v1/reports/spend?${range}&group_by=tag.team`,
        runs: 5,
      },
      {
        name: 'spend by day, tag.feature (30 days)',
        path: `/svc/v1/reports/spend?${range}&group_by=day,tag.feature`,
        runs: 5,
      },
      {
        name: 'spend by metadata.customer (30 days)',
        path: `/svc/v1/reports/spend?${range}&group_by=metadata.customer`,
        runs: 5,
      },
      {
        name: 'spend by tag.team, alias (1 day: audit rows)',
        path: `/svc/v1/reports/spend?from=${iso(END - DAY_MS)}&to=${iso(END)}&group_by=tag.team,alias`,
        runs: 5,
      },
      {
        name: 'cost per Outcome (30 days)',
        path: `/svc/v1/reports/cost-per-outcome?${range}&definition_id=odef_resolved`,
        runs: 3,
      },
      {
        name: 'cost per Outcome by metadata.plan (30 days)',
        path: `/svc/v1/reports/cost-per-outcome?${range}&definition_id=odef_resolved&group_by=metadata.plan`,
        runs: 3,
      },
      {
        name: 'cost per Outcome by tag.team (1 day of Work Units)',
        path: `/svc/v1/reports/cost-per-outcome?from=${iso(END - DAY_MS)}&to=${iso(END)}&definition_id=odef_resolved&group_by=tag.team`,
        runs: 3,
      },
    ];
    await measure(url, reports);
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const admin = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const kept = argument('--database');
  const name = kept ?? `svc_log_bench_${process.pid}`;
  const control = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const url = new URL(admin);
  url.pathname = `/${name}`;
  if (kept === undefined) await control(`CREATE DATABASE ${name}`);
  console.log(`database ${name}, ${ATTEMPTS.toLocaleString('en')} attempts`);
  const store = new PostgresStore({
    connectionString: url.toString(),
    // The gateway's default is 5 s; the bench prints a slower figure instead of a timeout.
    statementTimeoutMs: Number(process.env.SVC_BENCH_STATEMENT_TIMEOUT_MS ?? 120_000),
  });
  try {
    if (kept === undefined) {
      await store.migrate();
      await load(url.toString());
    }
    await timeAll(store);
  } finally {
    await store.close();
    if (process.argv.includes('--keep') || kept !== undefined) console.log(`kept database ${name}`);
    else await control(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();
