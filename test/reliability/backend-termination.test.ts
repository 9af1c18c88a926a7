/**
 * PostgreSQL ends the gateway's connections under load (a failover, a DBA's pg_terminate_backend,
 * a pooler's idle timeout): a real gateway process on a fresh database, ~20 concurrent mixed
 * requests, and every 200 ms `pg_terminate_backend` on every backend of that database.
 * - the process survives (no unhandled 'error' event on a pooled client);
 * - every request answers a success or a 503 (never a 500, never a hang);
 * - after the loop the same process recovers: requests succeed again.
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
import { type CallResult, call, eventually, get, type Json, post, simulatedVendora } from './support.js';

const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };
const TERMINATE_EVERY_MS = 200;
const TERMINATE_FOR_MS = 4000;
const WORKERS = 20;

describePostgres('reliability: PostgreSQL terminates the gateway backends under load', () => {
  const folder = tempFolder('terminate');
  let database: TestDatabase;
  let simulator: Simulator;
  let gateway: GatewayProcess;
  let admin: pg.Client;
  let workUnit: Json;
  let run: Json;

  beforeAll(async () => {
    database = await createTestDatabase();
    simulator = await startSimulator({ port: 0 });
    gateway = await startGatewayProcess({
      name: 'terminate',
      folder: folder.path,
      environment: { SVC_TERMINATE_DATABASE_URL: database.url },
      config: {
        store: {
          kind: 'postgres',
          postgres: {
            url_env: 'SVC_TERMINATE_DATABASE_URL',
            connect_timeout_ms: 1000,
            statement_timeout_ms: 2000,
          },
        },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        ...simulatedVendora(simulator.url, PRICE),
      },
    });
    admin = new pg.Client({ connectionString: new URL('/postgres', database.url).toString() });
    admin.on('error', () => {});
    await admin.connect();
    workUnit = (await post(gateway.url, gateway.key, '/svc/v1/work-units', {})).body;
    run = (
      await post(gateway.url, gateway.key, '/svc/v1/runs', {
        work_unit_id: workUnit.id,
        budget_micros_usd: 50_000_000,
      })
    ).body;
    expect(run.id).toMatch(/^run_/);
  });

  afterAll(async () => {
    await admin?.end().catch(() => undefined);
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await simulator?.close();
    await database?.drop();
    folder.remove();
  });

  function oneRequest(index: number): Promise<CallResult> {
    const key = gateway.key;
    switch (index % 6) {
      case 0:
        return post(gateway.url, key, '/svc/v1/work-units', {});
      case 1:
        return get(gateway.url, key, `/svc/v1/runs/${run.id}`);
      case 2:
        return get(gateway.url, key, `/svc/v1/work-units/${workUnit.id}`);
      case 3:
        // A Work Unit holds at most 32 Runs: each Run here gets its own Work Unit.
        return post(gateway.url, key, '/svc/v1/work-units', {}).then((created) =>
          created.status === 201
            ? post(gateway.url, key, '/svc/v1/runs', {
                work_unit_id: created.body.id,
                budget_micros_usd: 1000,
              })
            : created,
        );
      default:
        return call(gateway.url, 'POST', '/v1/messages', {
          headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'x-svc-run-id': run.id },
          body: {
            model: 'sim',
            max_tokens: 16,
            stream: index % 2 === 0,
            messages: [{ role: 'user', content: 'Hi' }],
          },
        });
    }
  }

  it('survives, answers only successes or 503, and recovers', async () => {
    const name = new URL(database.url).pathname.slice(1);
    const deadline = Date.now() + TERMINATE_FOR_MS;
    let terminated = 0;
    const killer = (async () => {
      while (Date.now() < deadline) {
        const result = await admin.query(
          'select pg_terminate_backend(pid) as done from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [name],
        );
        terminated += result.rows.filter((row) => row.done === true).length;
        await new Promise((done) => setTimeout(done, TERMINATE_EVERY_MS));
      }
    })();
    const statuses: Record<number, number> = {};
    const bad: string[] = [];
    const worker = async (id: number) => {
      for (let index = id; Date.now() < deadline; index += WORKERS) {
        const result = await oneRequest(index).catch((error: unknown) => ({
          status: 0,
          body: { error: String(error) },
        }));
        statuses[result.status] = (statuses[result.status] ?? 0) + 1;
        if (result.status !== 503 && (result.status < 200 || result.status >= 300))
          bad.push(`${index % 6}: ${result.status} ${JSON.stringify(result.body).slice(0, 300)}`);
      }
    };
    await Promise.all([killer, ...Array.from({ length: WORKERS }, (_, id) => worker(id))]);
    console.info(
      `[backend termination] terminated ${terminated} backends; statuses ${JSON.stringify(statuses)}`,
    );
    expect(gateway.alive(), gateway.output().slice(-3000)).toBe(true);
    expect(bad.slice(0, 10)).toEqual([]);
    expect(terminated).toBeGreaterThan(0);
    // Recovery: the same process answers every kind of request with a success again.
    await eventually(
      async () => {
        const results = await Promise.all(Array.from({ length: 6 }, (_, index) => oneRequest(index)));
        return results.every((result) => result.status >= 200 && result.status < 300) ? true : undefined;
      },
      10_000,
      'requests succeed after the termination loop',
    );
    expect(gateway.alive()).toBe(true);
  }, 60_000);
});
