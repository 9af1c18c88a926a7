/**
 * Reports at scale: fills a SQLite store and a PostgreSQL store (when one answers on
 * SVC_TEST_POSTGRES_URL or 127.0.0.1:5432) with 10,000 Work Units, 30,000 Runs, 8,000 Outcomes and
 * 1,000,000 settled attempts (attempts + audit rows) spread over 30 days, in bulk SQL, then prints
 * the time of each report and list over those 30 days as HTTP answers (target: under 1 s each).
 *
 *   node --import tsx bench/reports.ts            (npm run bench:reports)
 *   ... --sqlite-only                             (SQLite alone)
 *   ... --postgres-only [--keep]                  (PostgreSQL alone; --keep leaves its database)
 *   ... --postgres-only --database NAME           (times again a database left by --keep; no fill)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import type { Caller } from '../src/governance/service.js';
import { registerReportRoutes } from '../src/http/report-routes.js';
import { spendReport } from '../src/reports/spend-report.js';
import type { Store } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const WORK_UNITS = 10_000;
const ATTEMPTS = 1_000_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const END = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
const START = END - 30 * DAY_MS;
const PROJECT = 'prj_bench';
const caller: Caller = { projectId: PROJECT, keyId: 'key_bench', scopes: ['governance:read'] };

/** Column expressions of the generated rows, given the row number `i` (dialect-neutral SQL). */
const ATTEMPT = {
  run: (i: string) => `'run_' || (${i} / 100) || '_' || (${i} % 3)`,
  alias: (i: string) => `'alias-' || (${i} % 4)`,
  connection: (i: string) => `'conn-' || (${i} % 3)`,
  model: (i: string) => `'model-' || (${i} % 6)`,
  key: (i: string) => `'key_' || (${i} % 5)`,
  state: (i: string) => `CASE WHEN ${i} % 200 = 0 THEN 'unknown' ELSE 'settled' END`,
  cost: (i: string) => `CASE WHEN ${i} % 200 = 0 THEN 6000 ELSE 100 + (${i} * 7919) % 5000 END`,
};

function fillSqlite(path: string): void {
  const db = new Database(path);
  const time = (seconds: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`;
  const unitStep = (30 * DAY_MS) / 1000 / WORK_UNITS;
  const attemptStep = (30 * DAY_MS) / 1000 / ATTEMPTS;
  const start = START / 1000;
  const series = (count: number) =>
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`;
  db.transaction(() => {
    db.exec(`${series(WORK_UNITS)}
      INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions, run_count)
      SELECT 'wku_' || i, '${PROJECT}', CASE WHEN i % 3 = 0 THEN 'open' ELSE 'closed' END, ${time(`${start} + i * ${unitStep}`)},
        CASE WHEN i % 3 = 0 THEN NULL ELSE ${time(`${start} + i * ${unitStep} + 3600`)} END,
        '[{"id":"odef_resolved","version":1}]', 3 FROM n`);
    db.exec(`INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at)
      SELECT 'run_' || substr(w.id, 5) || '_' || r.k, w.project_id, w.id, 1000000000, 'active', w.created_at, '2099-01-01T00:00:00.000Z'
      FROM work_units w, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2) r`);
    db.exec(`INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value, reporter_key_id,
        observed_at, ingested_at, revision, governance_sequence, provisional, is_head)
      SELECT 'out_' || substr(id, 5), project_id, id, 'odef_resolved', 1,
        CASE WHEN CAST(substr(id, 5) AS INTEGER) % 5 = 3 THEN 'false' ELSE 'true' END, 'key_0', created_at, created_at, 1,
        CAST(substr(id, 5) AS INTEGER) + 1, status = 'open', 1
      FROM work_units WHERE CAST(substr(id, 5) AS INTEGER) % 5 <> 4`);
    db.exec(`${series(ATTEMPTS)}
      INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, cost, lease_expires_at, owner, endpoint, alias,
        connection, profile, upstream_model, created_at, settled_at)
      SELECT 'att_' || i, '${PROJECT}', ${ATTEMPT.key('i')}, ${ATTEMPT.run('i')}, ${ATTEMPT.state('i')}, 6000, ${ATTEMPT.cost('i')},
        ${time(`${start} + i * ${attemptStep}`)}, 'bench', 'messages', ${ATTEMPT.alias('i')}, ${ATTEMPT.connection('i')}, 'p',
        ${ATTEMPT.model('i')}, ${time(`${start} + i * ${attemptStep}`)}, ${time(`${start} + i * ${attemptStep} + 2`)} FROM n`);
    db.exec(`INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
        reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status,
        duration_ms, overran, created_at, settled_at)
      SELECT id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost,
        300 + rowid % 700, 50 + rowid % 300, 0, rowid % 100, CASE WHEN state = 'unknown' THEN 'unknown' ELSE 'completed' END, 200, 2000, 0, created_at, settled_at FROM attempts ORDER BY rowid`);
    db.exec(`UPDATE runs SET committed = (SELECT COALESCE(SUM(cost), 0) FROM audit WHERE audit.run_id = runs.id),
      unknown_attempts = (SELECT COUNT(*) FROM audit WHERE audit.run_id = runs.id AND state = 'unknown')`);
  })();
  db.close();
}

async function fillPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', (error) => console.log('postgres   fill connection lost:', error.message));
  await client.connect();
  const time = (ms: string) => `to_timestamp((${ms}) / 1000.0)`;
  const unitStep = (30 * DAY_MS) / WORK_UNITS;
  const attemptStep = (30 * DAY_MS) / ATTEMPTS;
  await client.query(`INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions, run_count)
    SELECT 'wku_' || i, '${PROJECT}', CASE WHEN i % 3 = 0 THEN 'open' ELSE 'closed' END, ${time(`${START} + i * ${unitStep}`)},
      CASE WHEN i % 3 = 0 THEN NULL ELSE ${time(`${START} + i * ${unitStep} + 3600000`)} END,
      '[{"id":"odef_resolved","version":1}]', 3 FROM generate_series(0::bigint, ${WORK_UNITS - 1}) i`);
  await client.query(`INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at)
    SELECT 'run_' || substr(w.id, 5) || '_' || k, w.project_id, w.id, 1000000000, 'active', w.created_at, '2099-01-01T00:00:00Z'
    FROM work_units w, generate_series(0, 2) k`);
  await client.query(`INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value, reporter_key_id,
      observed_at, ingested_at, revision, governance_sequence, provisional, is_head)
    SELECT 'out_' || substr(id, 5), project_id, id, 'odef_resolved', 1,
      CASE WHEN substr(id, 5)::int % 5 = 3 THEN 'false' ELSE 'true' END, 'key_0', created_at, created_at, 1,
      substr(id, 5)::int + 1, status = 'open', true
    FROM work_units WHERE substr(id, 5)::int % 5 <> 4`);
  await client.query(`INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, cost, lease_expires_at, owner, endpoint,
      alias, connection, profile, upstream_model, created_at, settled_at)
    SELECT 'att_' || i, '${PROJECT}', ${ATTEMPT.key('i')}, ${ATTEMPT.run('i')}, ${ATTEMPT.state('i')}, 6000, ${ATTEMPT.cost('i')},
      ${time(`${START} + i * ${attemptStep}`)}, 'bench', 'messages', ${ATTEMPT.alias('i')}, ${ATTEMPT.connection('i')}, 'p',
      ${ATTEMPT.model('i')}, ${time(`${START} + i * ${attemptStep}`)}, ${time(`${START} + i * ${attemptStep} + 2000`)}
    FROM generate_series(0::bigint, ${ATTEMPTS - 1}) i`);
  await client.query(`INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model,
      state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status,
      duration_ms, overran, created_at, settled_at)
    SELECT id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost,
      300 + n % 700, 50 + n % 300, 0, n % 100, CASE WHEN state = 'unknown' THEN 'unknown' ELSE 'completed' END, 200, 2000, false, created_at, settled_at
    FROM (SELECT *, substr(id, 5)::int AS n FROM attempts) a ORDER BY n`);
  await client.query(`UPDATE runs SET committed = s.spend, unknown_attempts = s.unknown
    FROM (SELECT run_id, SUM(cost) AS spend, COUNT(*) FILTER (WHERE state = 'unknown') AS unknown FROM audit GROUP BY run_id) s
    WHERE s.run_id = runs.id`);
  // What autovacuum does after a bulk load: statistics and the visibility map (index-only scans).
  await client.query('VACUUM ANALYZE');
  await client.end();
}

/**
 * The reports' HTTP routes (src/http/report-routes.ts) on a loopback server, the guard answering
 * the bench's caller: a timed report is the whole answer a user waits for (store reads, the use
 * case, JSON or CSV rendering, the body read by the client).
 */
async function reportServer(store: Store): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify({ logger: false });
  registerReportRoutes(app, {
    guard: async () => caller,
    store,
    clock: { now: () => END },
    pendingFor: () => 0,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: address, close: () => app.close() };
}

async function timeReports(label: string, store: Store): Promise<void> {
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
  const server = await reportServer(store);
  const range = `from=${new Date(START).toISOString()}&to=${new Date(END).toISOString()}`;
  const get =
    (path: string, accept = 'application/json') =>
    async () => {
      const response = await fetch(`${server.url}${path}`, { headers: { accept } });
      // The body's bytes, every one received (a client decodes them in its own process).
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body.toString()}`);
      return body;
    };
  const spend = (groupBy: string, accept?: string) =>
    get(`/svc/v1/reports/spend?${range}&group_by=${groupBy}`, accept);
  const cases: Array<[string, () => Promise<Buffer>]> = [
    ['spend by day', spend('day')],
    ['spend by day, alias', spend('day,alias')],
    ['spend by hour, connection', spend('hour,connection')],
    ['spend by upstream model', spend('upstream_model')],
    ['spend by key', spend('key')],
    ['spend by hour, every dimension', spend('hour,alias,connection,upstream_model,key')],
    ['  the same as CSV', spend('hour,alias,connection,upstream_model,key', 'text/csv')],
    ['cost per Outcome', get(`/svc/v1/reports/cost-per-outcome?${range}&definition_id=odef_resolved`)],
    ['list Work Units (page of 50)', get('/svc/v1/work-units?status=closed')],
    ['list Runs (depleted filter)', get('/svc/v1/runs?budget_state=available')],
    ['list Outcomes (value filter)', get('/svc/v1/outcomes?definition_id=odef_resolved&value=false')],
    ['list attempts of a Run', get('/svc/v1/runs/run_5000_1/attempts')],
  ];
  try {
    for (const [name, run] of cases) {
      const times: number[] = [];
      let bytes = 0;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        bytes = (await run()).length;
        times.push(performance.now() - started);
      }
      const first = times[0]!.toFixed(0);
      const best = Math.min(...times).toFixed(0);
      const size = bytes >= 100_000 ? `  (${(bytes / 1_000_000).toFixed(1)} MB)` : '';
      console.log(
        `${label.padEnd(10)} ${name.padEnd(34)} first ${first.padStart(5)} ms   best of 3 ${best.padStart(5)} ms${size}`,
      );
    }
    const check = JSON.parse((await spend('key')()).toString()) as { totals: { calls: number } };
    console.log(`${label.padEnd(10)} attempts in the 30 days: ${check.totals.calls}`);
  } finally {
    await server.close();
  }
}

/**
 * PostgreSQL: 10,000 attempts settled since the last fold (in the last hour of the period), then
 * the first report after them, which folds them and reads the rest from the rollup.
 */
async function timeUnfoldedTail(url: string, store: Store): Promise<void> {
  const TAIL = 10_000;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const at = `to_timestamp(${(END - HOUR_MS / 2) / 1000})`;
  await client.query(`INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model,
      state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status,
      duration_ms, overran, created_at, settled_at)
    SELECT 'att_tail_${process.pid}_' || i, '${PROJECT}', ${ATTEMPT.key('i')}, ${ATTEMPT.run('i')}, 'messages', ${ATTEMPT.alias('i')},
      ${ATTEMPT.connection('i')}, 'p', ${ATTEMPT.model('i')}, 'settled', 6000, 100, 300, 50, 0, 0, 'completed', 200, 2000, false, ${at}, ${at}
    FROM generate_series(0::bigint, ${TAIL - 1}) i`);
  // The same run's reference: spend by day summed from the raw audit rows, as before the rollups.
  const raw = performance.now();
  await client.query(
    `SELECT date_trunc('day', created_at, 'UTC') AS bucket, COUNT(*), SUM(input_tokens), SUM(output_tokens),
       SUM(cache_creation_input_tokens), SUM(cache_read_input_tokens), SUM(cost), COUNT(*) FILTER (WHERE state = 'unknown')
     FROM audit WHERE project_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1 ORDER BY 1`,
    [PROJECT, new Date(START).toISOString(), new Date(END).toISOString()],
  );
  console.log(
    `postgres   reference: spend by day summed from the raw audit rows ${(performance.now() - raw).toFixed(0).padStart(5)} ms`,
  );
  await client.end();
  const range = { from: new Date(START).toISOString(), to: new Date(END).toISOString() };
  const started = performance.now();
  const report = await spendReport(store, caller, { ...range, group_by: 'day' }, END);
  const ms = (performance.now() - started).toFixed(0);
  console.log(
    `postgres   spend by day, first read after ${TAIL} new attempts (fold included) ${ms.padStart(5)} ms (calls ${report.totals.calls})`,
  );
}

async function bench(
  label: string,
  open: () => Promise<Store>,
  fill: () => Promise<void>,
  more: (store: Store) => Promise<void> = async () => {},
): Promise<void> {
  const setup = await open();
  await setup.migrate();
  await setup.close();
  const started = performance.now();
  await fill();
  console.log(`${label.padEnd(10)} filled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const store = await open();
  try {
    // The first report read folds the whole backlog into the hourly rollups (report-fold.ts): timed
    // apart, once, as a PostgreSQL gateway upgraded onto an existing audit trail pays it once (on
    // SQLite the fill writes the audit rows directly, past the store's background fold).
    const folding = performance.now();
    await store.reports.fold();
    console.log(
      `${label.padEnd(10)} first fold of the backlog ${(performance.now() - folding).toFixed(0).padStart(5)} ms`,
    );
    await timeReports(label, store);
    await more(store);
  } finally {
    await store.close();
  }
}

async function main() {
  if (process.argv.includes('--postgres-only')) return postgres();
  const folder = mkdtempSync(join(tmpdir(), 'svc-reports-bench-'));
  const path = join(folder, 'svc.db');
  try {
    await bench(
      'sqlite',
      async () => new SqliteStore({ path, synchronous: 'normal', exclusive: false }),
      async () => fillSqlite(path),
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  if (!process.argv.includes('--sqlite-only')) await postgres();
}

async function postgres() {
  const admin = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const reused = process.argv.indexOf('--database');
  const name = reused > 0 ? String(process.argv[reused + 1]) : `svc_bench_${process.pid}`;
  /** One short-lived admin connection per statement (others' tests may restart the server meanwhile). */
  const control = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 3000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query(sql);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  try {
    if (reused < 0) await control(`CREATE DATABASE ${name}`);
  } catch {
    console.log('postgres   skipped: no server at', admin.replace(/\/\/[^@]*@/, '//'));
    return;
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  try {
    await bench(
      'postgres',
      async () =>
        new PostgresStore({
          connectionString: url.toString(),
          // The gateway's default is 5 s; the bench reports a slower figure instead of a timeout.
          statementTimeoutMs: Number(process.env.SVC_BENCH_STATEMENT_TIMEOUT_MS ?? 5000),
        }),
      async () => {
        if (reused < 0) await fillPostgres(url.toString());
      },
      (store) => timeUnfoldedTail(url.toString(), store),
    );
  } finally {
    // --keep leaves the filled database for EXPLAIN (drop it yourself: the name is printed).
    if (process.argv.includes('--keep') || reused > 0) console.log(`postgres   kept database ${name}`);
    else await control(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();
