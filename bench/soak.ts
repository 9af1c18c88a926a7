/**
 * Soak (issue 10): mixed load for SOAK_SECONDS (default 180) against two gateway replicas sharing
 * one PostgreSQL database, while the database connection of replica B is cut and restored (a TCP
 * proxy between B and PostgreSQL) and the replicas are killed with SIGKILL and restarted in turn.
 * Loopback only; every process it starts is stopped by PID at the end. Afterwards it checks the
 * ledger and prints the figures (docs/operations.md quotes a run):
 *   - every Run: committed + reserved <= budget (+ recorded overrun, which is reported), and
 *     reserved back to 0 once the reaper has settled the leases of the killed replicas;
 *   - every attempt settled exactly once: none left `reserved`, one audit row per attempt, and each
 *     Run's committed equals the sum of its attempts' costs;
 *   - the store invariants of the reliability tests; no answer 500; no replica died unasked.
 *
 *   node --import tsx bench/soak.ts        SOAK_SECONDS=60 SOAK_WORKERS=12 to change the shape
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../src/simulator/server.js';
import { brokenInvariants, postgresInspector } from '../test/reliability/store-inspection.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../test/support/gateway-process.js';
import { createTestDatabase, postgresAvailable } from '../test/support/postgres-database.js';
import { startTcpProxy } from '../test/support/tcp-proxy.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 12);
const LEASE_SECONDS = 8;
const CUT_EVERY_MS = 15_000;
const CUT_FOR_MS = 4_000;
const KILL_EVERY_MS = 40_000;
const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };
/** Answers a client may legitimately get under these faults; anything else is counted as bad. */
const EXPECTED = new Set([200, 201, 403, 404, 409, 429, 503]);

type Kind = 'create' | 'message' | 'stream' | 'read' | 'close';

interface Figures {
  requests: number;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  bad: string[];
  proxyCuts: number;
  kills: number;
}

if (!postgresAvailable) {
  console.error('The soak needs PostgreSQL at 127.0.0.1:5432 (or SVC_TEST_POSTGRES_URL).');
  process.exit(2);
}

const folder = tempFolder('soak');
const database = await createTestDatabase();
const target = new URL(database.url);
const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
const viaProxy = new URL(database.url);
viaProxy.hostname = '127.0.0.1';
viaProxy.port = String(proxy.port);
const simulator = await startSimulator({ port: 0 });
simulator.setBehaviour({ latencyMs: 20, eventDelayMs: 5 });

function startReplica(name: 'a' | 'b'): Promise<GatewayProcess> {
  return startGatewayProcess({
    name: `soak-${name}`,
    folder: folder.path,
    environment: { SVC_SOAK_DATABASE_URL: name === 'a' ? database.url : viaProxy.toString() },
    config: {
      store: {
        kind: 'postgres',
        postgres: { url_env: 'SVC_SOAK_DATABASE_URL', connect_timeout_ms: 1000, statement_timeout_ms: 2000 },
      },
      data_dir: folder.path,
      projects: reliabilityProjects(),
      ledger: { lease_seconds: LEASE_SECONDS, reaper_interval_seconds: 1 },
      connections: [
        {
          name: 'sim-vendora',
          profile: 'vendora.messages.2023-06-01',
          base_url: simulator.url,
          auth: { scheme: 'none' },
          timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000 },
        },
      ],
      models: [{ alias: 'sim', targets: [{ connection: 'sim-vendora', model: 'up-sim', price: PRICE }] }],
    },
  });
}

const replicas: Record<'a' | 'b', GatewayProcess | undefined> = { a: await startReplica('a'), b: undefined };
replicas.b = await startReplica('b');
const key = replicas.a!.key;
const figures: Figures = { requests: 0, byStatus: {}, byKind: {}, bad: [], proxyCuts: 0, kills: 0 };
const runs: string[] = [];
const deadline = Date.now() + SECONDS * 1000;

async function send(
  kind: Kind,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const live = (['a', 'b'] as const).map((name) => replicas[name]).filter((replica) => replica?.alive());
  const replica = live[Math.floor(Math.random() * live.length)];
  figures.requests += 1;
  figures.byKind[kind] = (figures.byKind[kind] ?? 0) + 1;
  let status = 0;
  let json: any;
  try {
    if (replica === undefined) throw new Error('no replica alive');
    const response = await fetch(`${replica.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        'idempotency-key': `soak-${crypto.randomUUID()}`,
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    status = response.status;
    const text = await response.text();
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
  } catch {
    status = 0; // connection refused or reset: the replica was being killed
  }
  figures.byStatus[status] = (figures.byStatus[status] ?? 0) + 1;
  if (status !== 0 && !EXPECTED.has(status))
    figures.bad.push(`${kind} ${method} ${path}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
  return { status, json };
}

async function worker(): Promise<void> {
  while (Date.now() < deadline) {
    const dice = Math.random();
    const run = runs[Math.floor(Math.random() * runs.length)];
    if (run === undefined || dice < 0.08) {
      const unit = await send('create', 'POST', '/svc/v1/work-units', {});
      if (unit.status !== 201) continue;
      // Small budgets against reservations of up to ~30,000 micro-USD: admission refuses and Runs deplete.
      const budget = 5_000 + Math.floor(Math.random() * 45_000);
      const created = await send('create', 'POST', '/svc/v1/runs', {
        work_unit_id: unit.json.id,
        budget_micros_usd: budget,
      });
      if (created.status === 201) runs.push(created.json.id);
    } else if (dice < 0.85) {
      const stream = dice < 0.45;
      const body = {
        model: 'sim',
        max_tokens: 64 + Math.floor(Math.random() * 2000),
        stream,
        messages: [{ role: 'user', content: 'Hello soak' }],
      };
      await send(stream ? 'stream' : 'message', 'POST', '/v1/messages', body, { 'x-svc-run-id': run });
    } else if (dice < 0.97) {
      await send('read', 'GET', `/svc/v1/runs/${run}`);
    } else {
      await send('close', 'POST', `/svc/v1/runs/${run}/close`, { reason: 'soak' });
    }
  }
}

async function faults(): Promise<void> {
  let nextCut = Date.now() + CUT_EVERY_MS;
  let nextKill = Date.now() + KILL_EVERY_MS;
  let victim: 'a' | 'b' = 'a';
  while (Date.now() < deadline - 5000) {
    await sleep(250);
    if (Date.now() >= nextCut) {
      await proxy.pause();
      figures.proxyCuts += 1;
      await sleep(CUT_FOR_MS);
      await proxy.resume();
      nextCut = Date.now() + CUT_EVERY_MS;
    }
    if (Date.now() >= nextKill) {
      await replicas[victim]!.kill('SIGKILL');
      figures.kills += 1;
      await sleep(1000);
      replicas[victim] = await startReplica(victim);
      victim = victim === 'a' ? 'b' : 'a';
      nextKill = Date.now() + KILL_EVERY_MS;
    }
  }
}

const started = Date.now();
console.log(`soak: ${SECONDS} s, ${WORKERS} workers, replicas a (direct) and b (through the cuttable proxy)`);
await Promise.all([faults(), ...Array.from({ length: WORKERS }, () => worker())]);
const loadSeconds = (Date.now() - started) / 1000;
const survived = (['a', 'b'] as const).every((name) => replicas[name]?.alive());

// Leases of attempts the killed replicas left open expire after LEASE_SECONDS; a live reaper settles them.
const inspector = postgresInspector(database.url);
const settleBy = Date.now() + (LEASE_SECONDS + 20) * 1000;
while (Date.now() < settleBy) {
  const [open] = await inspector.rows("SELECT count(*) AS n FROM attempts WHERE state = 'reserved'");
  if (Number(open?.n) === 0) break;
  await sleep(500);
}

const count = async (text: string) => Number((await inspector.rows(text))[0]?.n ?? 0);
const checks: Record<string, number> = {
  'Runs with committed + reserved > budget + overrun': await count(
    'SELECT count(*) AS n FROM runs WHERE committed + reserved > budget + overrun',
  ),
  'Runs with reserved <> 0 after the drain': await count(
    'SELECT count(*) AS n FROM runs WHERE reserved <> 0',
  ),
  'attempts still reserved after the drain': await count(
    "SELECT count(*) AS n FROM attempts WHERE state = 'reserved'",
  ),
  'settled attempts without exactly one audit row': await count(
    `SELECT count(*) AS n FROM attempts a WHERE a.state <> 'reserved'
       AND (SELECT count(*) FROM audit u WHERE u.attempt_id = a.id) <> 1`,
  ),
  'audit rows without their attempt': await count(
    'SELECT count(*) AS n FROM audit u WHERE NOT EXISTS (SELECT 1 FROM attempts a WHERE a.id = u.attempt_id)',
  ),
  'Runs whose committed differs from the sum of their attempts': await count(
    `SELECT count(*) AS n FROM runs r WHERE r.committed <>
       (SELECT COALESCE(sum(a.cost), 0) FROM attempts a WHERE a.run_id = r.id AND a.state <> 'reserved')`,
  ),
};
const broken = await brokenInvariants(inspector);
const ledger = (
  await inspector.rows(
    `SELECT count(*) AS runs, COALESCE(sum(budget), 0) AS budget, COALESCE(sum(committed), 0) AS committed,
            COALESCE(sum(overrun), 0) AS overrun, COALESCE(sum(unknown_attempts), 0) AS unknown,
            count(*) FILTER (WHERE committed + reserved >= budget) AS exhausted FROM runs`,
  )
)[0]!;
const attempts = await inspector.rows(
  'SELECT state, count(*) AS n FROM attempts GROUP BY state ORDER BY state',
);
const outcomes = await inspector.rows(
  'SELECT outcome, count(*) AS n FROM audit GROUP BY outcome ORDER BY outcome',
);

console.log(
  `\nload: ${figures.requests} requests in ${loadSeconds.toFixed(0)} s (${(figures.requests / loadSeconds).toFixed(0)}/s)`,
);
console.log(`  by kind:   ${JSON.stringify(figures.byKind)}`);
console.log(
  `  by status: ${JSON.stringify(figures.byStatus)} (0 = connection refused/reset by a killed replica)`,
);
console.log(
  `faults: ${figures.proxyCuts} PostgreSQL cuts of ${CUT_FOR_MS} ms (replica b), ${figures.kills} SIGKILL + restart`,
);
console.log(
  `ledger: ${ledger.runs} Runs, budget ${ledger.budget} micro-USD, committed ${ledger.committed}, overrun ${ledger.overrun}, ` +
    `${ledger.exhausted} Runs exhausted, ${ledger.unknown} unknown-cost attempts`,
);
console.log(`  attempts by state: ${attempts.map((row) => `${row.state} ${row.n}`).join(', ')}`);
console.log(`  settlements by outcome: ${outcomes.map((row) => `${row.outcome} ${row.n}`).join(', ')}`);
console.log('checks (each must be 0):');
for (const [name, value] of Object.entries(checks)) console.log(`  ${String(value).padStart(5)}  ${name}`);
console.log(`store invariants broken: ${Object.keys(broken).length === 0 ? 'none' : JSON.stringify(broken)}`);
console.log(
  `unexpected answers: ${figures.bad.length}${figures.bad.length ? `\n  ${figures.bad.slice(0, 10).join('\n  ')}` : ''}`,
);
console.log(`replicas alive at the end: ${survived}`);

await replicas.a?.stop();
await replicas.b?.stop();
await stopAllGatewayProcesses();
await proxy.close();
await simulator.close();
await database.drop();
folder.remove();
const ok =
  survived &&
  figures.bad.length === 0 &&
  Object.values(checks).every((value) => value === 0) &&
  Object.keys(broken).length === 0;
console.log(ok ? '\nSOAK PASSED' : '\nSOAK FAILED');
process.exit(ok ? 0 : 1);
