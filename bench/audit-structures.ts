/**
 * What the audit's secondary structures on SQLite cost as CPU (user and kernel) per call: two
 * gateways of ./dist on the measured core, one of them with the named indexes or triggers dropped
 * from its live file, loaded in alternating turns (A B, B A, ...) so that the machine's drift falls
 * on both. Prints each turn's CPU per call and the medians. An upper bound for a design change,
 * not a configuration: the reports and the request log need what it drops. Asserts nothing.
 *
 *   npm run build && node --import tsx bench/audit-structures.ts
 *   BENCH_DROP=index:audit_log_by_project,index:audit_by_run,...   (indexes carry the `index:` prefix;
 *     the default: the audit's five non-unique indexes)
 *   BENCH_DROP=audit_append_only_update   (a trigger: a name without the prefix)
 *   BENCH_MODEL=bench-chat|bench (the messages -> chat translation, or vendora -> vendora)
 *   BENCH_STREAM=1|0 (streams at c16, or unary calls at c64)   BENCH_ROUNDS=8   BENCH_SECONDS=5
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  type BenchGateway,
  callHeaders,
  createRun,
  freePort,
  type LoadOptions,
  load,
  median,
  messagesBody,
  pinSelf,
  start,
  startBenchGateway,
  twentyDeltaStreams,
} from './harness.js';

const MODEL = process.env.BENCH_MODEL ?? 'bench-chat';
const STREAM = process.env.BENCH_STREAM !== '0';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** The audit's non-unique indexes on SQLite (migration 18 dropped `audit_by_project`). */
const AUDIT_INDEXES = [
  'audit_log_by_project',
  'audit_log_by_key',
  'audit_log_by_run',
  'audit_log_by_work_unit',
  'audit_by_run',
].map((name) => `index:${name}`);
const DROP = (process.env.BENCH_DROP ?? AUDIT_INDEXES.join(','))
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name.length > 0);

interface Measured {
  name: string;
  gateway: BenchGateway;
  folder: string;
  options: LoadOptions;
}

/** A gateway on the measured core (core 1, as in bench/run.ts) with a Run for its calls. */
async function startMeasured(name: string, simulatorPort: number): Promise<Measured> {
  const folder = mkdtempSync(join(tmpdir(), `svc-audit-structures-${name}-`));
  const gateway = await startBenchGateway({
    core: 1,
    folder,
    name,
    simulatorPort,
    store: `{ kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }`,
    logLevel: 'info',
  });
  const runId = await createRun(gateway);
  return {
    name,
    gateway,
    folder,
    options: {
      url: `${gateway.url}/v1/messages`,
      headers: callHeaders(gateway, runId),
      body: messagesBody(STREAM, MODEL),
      connections: STREAM ? 16 : 64,
      pids: [gateway.process.pid],
    },
  };
}

/** Drops `names` from the gateway's live file (its prepared statements are prepared again). */
function drop(folder: string, names: string[]): void {
  const db = new Database(join(folder, 'svc.db'));
  try {
    for (const name of names)
      db.exec(
        name.startsWith('index:') ? `DROP INDEX "${name.slice('index:'.length)}"` : `DROP TRIGGER "${name}"`,
      );
  } finally {
    db.close();
  }
}

async function main() {
  pinSelf(0);
  const simulatorPort = await freePort();
  const simulator = await start(
    0,
    ['--import', 'tsx', 'src/simulator/main.ts', '--port', String(simulatorPort)],
    'http://',
  );
  const gateways: Measured[] = [];
  try {
    await twentyDeltaStreams(`http://127.0.0.1:${simulatorPort}`);
    gateways.push(await startMeasured('kept', simulatorPort), await startMeasured('dropped', simulatorPort));
    drop(gateways[1]!.folder, DROP);
    for (const measured of gateways) await load({ ...measured.options, seconds: 3 });
    const figures = new Map<string, number[]>(gateways.map((measured) => [measured.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? gateways : [...gateways].reverse();
      for (const measured of order) {
        const result = await load({ ...measured.options, seconds: SECONDS });
        figures.get(measured.name)!.push(result.cpuMsPerCall);
        process.stderr.write(`round ${round + 1}: ${measured.name} ${result.cpuMsPerCall.toFixed(4)} ms\n`);
      }
    }
    const kept = median(figures.get('kept')!);
    const dropped = median(figures.get('dropped')!);
    const what = STREAM ? 'stream at c16' : 'call at c64';
    process.stdout.write(
      `CPU per ${what} to ${MODEL}, medians of ${ROUNDS} alternating turns of ${SECONDS} s:\n` +
        `  as shipped            ${kept.toFixed(4)} ms\n` +
        `  without ${DROP.join(', ')}  ${dropped.toFixed(4)} ms (${(((dropped - kept) / kept) * 100).toFixed(1)} %)\n`,
    );
  } finally {
    for (const measured of gateways) {
      await measured.gateway.process.stop();
      rmSync(measured.folder, { recursive: true, force: true });
    }
    await simulator.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
