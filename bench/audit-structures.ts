/**
 * What the audit's secondary structures on SQLite cost as CPU (user and kernel) per call: two
 * gateways of ./dist on the measured core, one of them with the named triggers or indexes dropped
 * from its live file, loaded in alternating turns (A B, B A, ...) so that the machine's drift falls
 * on both. Prints each turn's CPU per call and the medians. An upper bound for a design change,
 * not a configuration: the reports and the request log need what it drops. Asserts nothing.
 *
 *   npm run build && node --import tsx bench/audit-structures.ts
 *   BENCH_DROP=audit_hourly_rollup,audit_attribute_hourly_rollup   (the default: the rollup triggers)
 *   BENCH_DROP=index:audit_log_by_project,index:audit_by_run,...   (indexes carry the `index:` prefix)
 *   BENCH_MODEL=bench-chat|bench (the messages -> chat translation, or vendora -> vendora)
 *   BENCH_STREAM=1|0 (streams at c16, or unary calls at c64)   BENCH_ROUNDS=8   BENCH_SECONDS=5
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  callHeaders,
  createRun,
  freePort,
  gatewayConfig,
  type LoadOptions,
  load,
  median,
  messagesBody,
  pinSelf,
  type Started,
  start,
  twentyDeltaStreams,
} from './harness.js';

const MODEL = process.env.BENCH_MODEL ?? 'bench-chat';
const STREAM = process.env.BENCH_STREAM !== '0';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const DROP = (process.env.BENCH_DROP ?? 'audit_hourly_rollup,audit_attribute_hourly_rollup')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name.length > 0);

interface Measured {
  name: string;
  child: Started;
  folder: string;
  options: LoadOptions;
}

async function startGateway(name: string, simulatorPort: number): Promise<Measured> {
  const folder = mkdtempSync(join(tmpdir(), `svc-audit-structures-${name}-`));
  const port = await freePort();
  const dbPath = join(folder, 'svc.db');
  writeFileSync(
    join(folder, 'gateway.yaml'),
    gatewayConfig({
      folder,
      name,
      port,
      simulatorPort,
      store: `{ kind: sqlite, sqlite: { path: ${dbPath} } }`,
      logLevel: 'info',
    }),
  );
  const child = await start(
    0,
    ['dist/src/main.js', 'serve', '--config', join(folder, 'gateway.yaml')],
    'listening on',
    {},
    join(folder, 'gateway.log'),
  );
  const address = {
    url: `http://127.0.0.1:${port}`,
    key: readFileSync(join(folder, 'key.txt'), 'utf8').trim(),
  };
  const runId = await createRun(address);
  return {
    name,
    child,
    folder,
    options: {
      url: `${address.url}/v1/messages`,
      headers: callHeaders(address, runId),
      body: messagesBody(STREAM, MODEL),
      connections: STREAM ? 16 : 64,
      pids: [child.pid],
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
  pinSelf(1);
  const simulatorPort = await freePort();
  const simulator = await start(
    1,
    ['--import', 'tsx', 'src/simulator/main.ts', '--port', String(simulatorPort)],
    'http://',
  );
  const gateways: Measured[] = [];
  try {
    await twentyDeltaStreams(`http://127.0.0.1:${simulatorPort}`);
    gateways.push(await startGateway('kept', simulatorPort), await startGateway('dropped', simulatorPort));
    drop(gateways[1]!.folder, DROP);
    for (const gateway of gateways) await load({ ...gateway.options, seconds: 3 });
    const figures = new Map<string, number[]>(gateways.map((gateway) => [gateway.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? gateways : [...gateways].reverse();
      for (const gateway of order) {
        const result = await load({ ...gateway.options, seconds: SECONDS });
        figures.get(gateway.name)!.push(result.cpuMsPerCall);
        process.stderr.write(`round ${round + 1}: ${gateway.name} ${result.cpuMsPerCall.toFixed(4)} ms\n`);
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
    for (const gateway of gateways) {
      await gateway.child.stop();
      rmSync(gateway.folder, { recursive: true, force: true });
    }
    await simulator.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
