/**
 * No overspend, proven (reliability notes 5.3, "bank" style): 200 concurrent calls at one Run whose
 * budget fits only five worst cases. While they run, every sample of the Run shows
 * committed + reserved <= budget; at the end every admitted call is settled (reserved 0), exactly
 * the admissible number got through, the rest were 403 run_budget_exceeded, and committed equals
 * the sum of the settled costs in the audit trail. On SQLite with one gateway, and on PostgreSQL
 * with two gateway processes (this one and a real second `svc-gateway serve`) on one database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { type RunningGateway, startGateway as startProductionGateway } from '../../src/gateway-server.js';
import { createLogger } from '../../src/lib/logger.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import type { Store } from '../../src/store/port.js';
import { baseConfig } from '../support/gateway.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  eventually,
  Governance,
  type Json,
  messageBody,
  PRICE,
  postMessages,
  priced,
  reservationFor,
  startGateway,
} from './support.js';

const CALLS = 200;
const ADMISSIBLE = 5;
const MODEL = 'm:vendora.messages.2023-06-01';
const UPSTREAM = 'up-vendora.messages.2023-06-01';
/** Each admitted call reports this usage: nearly its whole worst case, so the budget fits five. */
const USAGE = { input_tokens: 20, output_tokens: 1000 };
const BODY = messageBody(MODEL, { max_tokens: 1000 });
const RESERVATION = reservationFor(BODY);
const COST = priced(PRICE, { input: USAGE.input_tokens, output: USAGE.output_tokens });
/** Five worst cases fit; after five costs are committed a sixth worst case no longer does. */
const BUDGET = ADMISSIBLE * RESERVATION + Math.floor(RESERVATION / 2);
/**
 * The upstream's latency: how long the admitted calls hold their reservations, the window in which
 * the sampler must see the Run several times. At 30 ms a fast gateway finished the whole trial
 * within two samples on PostgreSQL (once in three CI runs of one session).
 */
const UPSTREAM_LATENCY_MS = 250;

interface TrialResult {
  statuses: Map<number, number>;
  codes: Map<string, number>;
  samples: number;
}

/** Fires CALLS calls at once (spread over `urls`) while sampling the Run; asserts the invariant at every sample. */
async function trial(
  urls: string[],
  key: string,
  governance: Governance,
  runId: string,
): Promise<TrialResult> {
  let running = true;
  let samples = 0;
  const sampler = (async () => {
    while (running) {
      const view = await governance.getRun(runId);
      samples += 1;
      expect(view.committed_micros_usd + view.reserved_micros_usd, JSON.stringify(view)).toBeLessThanOrEqual(
        BUDGET,
      );
      expect(view.reserved_micros_usd).toBeGreaterThanOrEqual(0);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  let release!: () => void;
  const barrier = new Promise<void>((resolve) => {
    release = resolve;
  });
  const calls = Array.from({ length: CALLS }, async (_, index) => {
    await barrier;
    return postMessages(urls[index % urls.length]!, key, BODY, { 'x-svc-run-id': runId });
  });
  release();
  const results = await Promise.all(calls);
  running = false;
  await sampler;
  const statuses = new Map<number, number>();
  const codes = new Map<string, number>();
  for (const result of results) {
    statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
    const code = result.status === 200 ? 'ok' : String(result.body?.error?.code);
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return { statuses, codes, samples };
}

async function checkQuiescence(
  store: Store,
  governance: Governance,
  runId: string,
  result: TrialResult,
): Promise<void> {
  expect(Object.fromEntries(result.codes)).toEqual({
    ok: ADMISSIBLE,
    run_budget_exceeded: CALLS - ADMISSIBLE,
  });
  expect(result.samples).toBeGreaterThan(2);
  const view = await eventually(async () => {
    const current = await governance.getRun(runId);
    return current.reserved_micros_usd === 0 ? current : undefined;
  });
  const audit = await store.listAudit({ runId, limit: 10_000 });
  expect(audit).toHaveLength(ADMISSIBLE);
  expect(
    audit.every((entry) => entry.state === 'settled' && entry.costMicrosUsd === COST && !entry.overran),
  ).toBe(true);
  expect(new Set(audit.map((entry) => entry.attemptId)).size).toBe(ADMISSIBLE);
  const settled = audit.reduce((sum, entry) => sum + entry.costMicrosUsd, 0);
  expect(view).toMatchObject({
    committed_micros_usd: settled,
    reserved_micros_usd: 0,
    unknown_attempts: 0,
    remaining_micros_usd: BUDGET - settled,
  });
  expect(settled).toBe(ADMISSIBLE * COST);
  expect(settled).toBeLessThanOrEqual(BUDGET);
}

it('the arithmetic of the trial: five worst cases fit, a sixth does not even after five settle', () => {
  expect(COST).toBeLessThanOrEqual(RESERVATION);
  expect(ADMISSIBLE * RESERVATION).toBeLessThanOrEqual(BUDGET);
  expect((ADMISSIBLE + 1) * RESERVATION).toBeGreaterThan(BUDGET);
  expect(ADMISSIBLE * COST + RESERVATION).toBeGreaterThan(BUDGET);
});

describe('no overspend [sqlite, one gateway]', () => {
  let gateway: SimulatedGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startGateway();
    key = await gateway.key();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it(`${CALLS} concurrent calls at one Run never overspend`, async () => {
    gateway.simulator.setBehaviour({ usage: USAGE, latencyMs: UPSTREAM_LATENCY_MS }, { model: UPSTREAM });
    const governance = new Governance(gateway.url, key);
    const run = await governance.run(BUDGET);
    const result = await trial([gateway.url], key, governance, run.id);
    await checkQuiescence(gateway.store, governance, run.id, result);
    expect(gateway.simulator.requests({ model: UPSTREAM })).toHaveLength(ADMISSIBLE);
  });
});

interface GatewayProcess {
  url: string;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Spawns `svc-gateway serve --config <file>` and resolves once it prints the URL it listens on. */
async function spawnGateway(configFile: string, environment: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'serve', '--config', configFile],
    {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, ...environment },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway process did not start:\n${stderr}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway process exited (${code}):\n${stderr}`));
    });
  });
  return {
    url,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

describePostgres('no overspend [postgres, two gateway processes on one database]', () => {
  let database: TestDatabase;
  let simulator: Simulator;
  let local: RunningGateway;
  let remote: GatewayProcess;
  let folder: string;
  const secret = newKeySecret();
  const environment = { SVC_TEST_SHARED_DATABASE_URL: '', SVC_TEST_SHARED_KEY: secret };

  function rawConfig(dataDir: string): Json {
    return {
      ...baseConfig(),
      logging: { level: 'warn' },
      data_dir: dataDir,
      store: {
        kind: 'postgres',
        postgres: { url_env: 'SVC_TEST_SHARED_DATABASE_URL', pool_max: 10, connect_timeout_ms: 10_000 },
      },
      keys: [
        {
          id: 'key_shared',
          project: 'prj_a',
          scopes: ['run:create', 'run:attach', 'governance:read', 'work_unit:create', 'inference'],
          secret_env: 'SVC_TEST_SHARED_KEY',
        },
      ],
      connections: [
        {
          name: 'direct',
          profile: 'vendora.messages.2023-06-01',
          base_url: simulator.url,
          auth: { scheme: 'none' },
          timeouts: { connect_ms: 2000, first_byte_ms: 10_000, idle_ms: 10_000 },
        },
      ],
      models: [{ alias: MODEL, targets: [{ connection: 'direct', model: UPSTREAM, price: PRICE }] }],
    };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    environment.SVC_TEST_SHARED_DATABASE_URL = database.url;
    simulator = await startSimulator({ port: 0 });
    folder = mkdtempSync(join(tmpdir(), 'svc-overspend-'));
    const config = parseConfig(rawConfig(join(folder, 'local')), 'local', environment);
    local = await startProductionGateway({ config, environment, logger: createLogger('warn') });
    const file = join(folder, 'remote.yaml');
    writeFileSync(file, JSON.stringify(rawConfig(join(folder, 'remote')), null, 2));
    remote = await spawnGateway(file, environment);
  }, 60_000);
  afterAll(async () => {
    await remote?.stop();
    await local?.close();
    await simulator?.close();
    await database?.drop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('the second gateway is a separate process serving the same database', async () => {
    expect(remote.url).not.toBe(local.url);
    const governance = new Governance(local.url, secret);
    const run = await governance.run(1_000_000);
    const viaRemote = await postMessages(remote.url, secret, BODY, { 'x-svc-run-id': run.id });
    expect(viaRemote.status, JSON.stringify(viaRemote.body) + remote.stderr()).toBe(200);
    const view = await governance.getRun(run.id);
    expect(view.committed_micros_usd).toBeGreaterThan(0);
    const audit = await local.store.listAudit({ runId: run.id, limit: 10 });
    expect(audit).toHaveLength(1);
  });

  it(`${CALLS} concurrent calls spread over both processes never overspend`, async () => {
    simulator.setBehaviour({ usage: USAGE, latencyMs: UPSTREAM_LATENCY_MS }, { model: UPSTREAM });
    simulator.clearRequests();
    const governance = new Governance(local.url, secret);
    const run = await governance.run(BUDGET);
    const result = await trial([local.url, remote.url], secret, governance, run.id);
    await checkQuiescence(local.store, governance, run.id, result);
    expect(simulator.requests({ model: UPSTREAM })).toHaveLength(ADMISSIBLE);
  });
});
