/**
 * Load on a healthy PostgreSQL database with the default pool (issue 9 item 3, issue 16 item 3):
 * - 2,000 concurrent model calls on ONE Run spread over two gateway replicas: every call is
 *   answered (200, or 429 store_busy with Retry-After as back-pressure: counted, never 503); each
 *   200 is settled at its actual cost (audit cost = price of its usage, 0 unknown attempts);
 *   committed + reserved <= budget at every sample, reserved back to 0 at the end and committed
 *   equal to the sum of the audit trail.
 * - 1,000 concurrent POST /svc/v1/work-units to one replica: no 503; every 201 is a row.
 * Wall time on the shared 2-core CI machine: about 15-30 s for the file.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import {
  type CallResult,
  call,
  countBy,
  eventually,
  newIdempotencyKey,
  post,
  simulatedVendora,
} from './support.js';

const CALLS = 2000;
const WORK_UNITS = 1000;
const BUDGET = 50_000_000;
const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000, request_fee_micros: 7 };

/** The price of one audit row's usage, rounded up as the ledger does (micro-USD). */
function priceOf(row: { input_tokens: string; output_tokens: string }): number {
  const input = Number(row.input_tokens);
  const output = Number(row.output_tokens);
  return (
    Math.ceil((input * PRICE.input_per_mtok_micros + output * PRICE.output_per_mtok_micros) / 1_000_000) +
    PRICE.request_fee_micros
  );
}

function expectBackPressureOnly(results: CallResult[], success: number): void {
  const counts = countBy(results);
  const unexpected = results.filter((result) => result.status !== success && result.status !== 429);
  expect(
    unexpected.slice(0, 3).map((result) => [result.status, result.body]),
    JSON.stringify(counts),
  ).toEqual([]);
  for (const result of results.filter((each) => each.status === 429)) {
    expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(result.body)).toContain('store_busy');
  }
}

describePostgres('reliability: load on a healthy PostgreSQL database (default pool, two replicas)', () => {
  let database: TestDatabase;
  let simulator: Simulator;
  const folder = tempFolder('postgres-load');
  let replicas: GatewayProcess[] = [];

  async function sql<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    simulator = await startSimulator({ port: 0 });
    const options = (name: string) => ({
      name,
      folder: folder.path,
      environment: { SVC_LOAD_DATABASE_URL: database.url },
      config: {
        logging: { level: 'warn' },
        store: { kind: 'postgres', postgres: { url_env: 'SVC_LOAD_DATABASE_URL' } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        ...simulatedVendora(simulator.url, PRICE),
      },
    });
    replicas = [await startGatewayProcess(options('load-a'))];
    replicas.push(await startGatewayProcess(options('load-b')));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((gateway) => gateway.stop()));
    await stopAllGatewayProcesses();
    await simulator?.close();
    await database?.drop();
    folder.remove();
  });

  it(`${CALLS} concurrent calls on one Run over two replicas: all answered, each 200 settled at its cost, 0 unknown, never over budget`, async () => {
    const [a] = replicas;
    const unit = await post(a!.url, a!.key, '/svc/v1/work-units', {});
    const run = await post(a!.url, a!.key, '/svc/v1/runs', {
      work_unit_id: unit.body.id,
      budget_micros_usd: BUDGET,
    });
    expect(run.status).toBe(201);
    const runId = run.body.id as string;
    let running = true;
    let samples = 0;
    const sampler = (async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        while (running) {
          const row = (
            await client.query('SELECT committed, reserved, budget FROM runs WHERE id = $1', [runId])
          ).rows[0];
          samples += 1;
          expect(Number(row.committed) + Number(row.reserved)).toBeLessThanOrEqual(Number(row.budget));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await client.end();
      }
    })();
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, index) => {
        const gateway = replicas[index % 2]!;
        return call(gateway.url, 'POST', '/v1/messages', {
          headers: {
            'x-api-key': gateway.key,
            'vendora-version': '2023-06-01',
            'x-svc-run-id': runId,
          },
          body: {
            model: 'sim',
            max_tokens: 16,
            messages: [{ role: 'user', content: `call ${index}` }],
          },
          timeoutMs: 120_000,
        });
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await sampler;
    expectBackPressureOnly(results, 200);
    const answered = results.filter((result) => result.status === 200).length;
    const busy = results.length - answered;
    process.stdout.write(
      `${CALLS} calls on one Run over two replicas: ${answered} x 200, ${busy} x 429 store_busy, ${seconds.toFixed(1)} s, ${samples} samples\n`,
    );
    expect(answered).toBeGreaterThan(0);
    const view = await eventually(
      async () => {
        const [row] = await sql<Record<string, string>>('SELECT * FROM runs WHERE id = $1', [runId]);
        expect(Number(row!.reserved)).toBe(0);
        return row!;
      },
      10_000,
      'reserved back to 0',
    );
    expect(Number(view.unknown_attempts)).toBe(0);
    const audit = await sql<Record<string, string>>('SELECT * FROM audit WHERE run_id = $1', [runId]);
    expect(audit).toHaveLength(answered);
    let sum = 0;
    for (const row of audit) {
      expect(row.state).toBe('settled');
      expect(Number(row.cost)).toBe(priceOf(row as { input_tokens: string; output_tokens: string }));
      sum += Number(row.cost);
    }
    expect(Number(view.committed)).toBe(sum);
    const [attempts] = await sql<{ open: number; unknown: number }>(
      `SELECT count(*) FILTER (WHERE state = 'reserved')::int AS open, count(*) FILTER (WHERE state = 'unknown')::int AS unknown
       FROM attempts WHERE run_id = $1`,
      [runId],
    );
    expect(attempts).toEqual({ open: 0, unknown: 0 });
  }, 180_000);

  it(`${WORK_UNITS} concurrent POST /svc/v1/work-units to one replica: no 503, every 201 is one row`, async () => {
    const [a] = replicas;
    const results = await Promise.all(
      Array.from({ length: WORK_UNITS }, () =>
        call(a!.url, 'POST', '/svc/v1/work-units', {
          key: a!.key,
          body: {},
          idempotencyKey: newIdempotencyKey('load'),
          timeoutMs: 120_000,
        }),
      ),
    );
    expectBackPressureOnly(results, 201);
    const created = results
      .filter((result) => result.status === 201)
      .map((result) => result.body.id as string);
    process.stdout.write(
      `${WORK_UNITS} concurrent Work Unit creations: ${created.length} x 201, ${WORK_UNITS - created.length} x 429\n`,
    );
    const [row] = await sql<{ count: number }>(
      'SELECT count(*)::int AS count FROM work_units WHERE id = ANY($1)',
      [created],
    );
    expect(row!.count).toBe(created.length);
  }, 180_000);
});
