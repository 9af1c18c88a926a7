/**
 * Instructions per reservation + settlement of the SQLite ledger alone (the store of a build's
 * `dist`, no HTTP), counted by callgrind on the main thread: a figure that repeats within a few per
 * cent whatever the machine is doing, for comparing a change to the ledger's statements or schema
 * where bench/ledger.ts (CPU time) cannot resolve it. Each call is attached to a Run with the
 * default event thresholds and a route, as the gateway's are; BENCH_PER_COMMIT calls share each
 * group commit (5: a c16 stream load's commits; 64: a c64 load's). Prints its figures.
 *
 *   npm run build && node --import tsx bench/ledger-instructions.ts [dist ...]   (default: ./dist)
 *   BENCH_PER_COMMIT=5 BENCH_CALLS=3000 BENCH_WARM=20000
 *
 * The child (`--child <store module>`) runs under valgrind with instrumentation off, warms up,
 * switches it on for the counted calls and dumps; the parent reads the main thread's total.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Store } from '../src/store/port.js';
import { createStoreRun, type RunWriter } from './store-run.js';

const PER_COMMIT = Number(process.env.BENCH_PER_COMMIT ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const WARM = Number(process.env.BENCH_WARM ?? 20_000);

const iso = (milliseconds: number) => new Date(milliseconds).toISOString();

/** The store of the build measured (its own module, so its own code): the port's ledger part. */
type LedgerStore = RunWriter & Pick<Store, 'migrate' | 'close' | 'reserve' | 'settle'>;

/** Under callgrind: the ledger's calls, PER_COMMIT to a group commit, the counted ones between toggles. */
async function child(storeModule: string): Promise<void> {
  const { SqliteStore } = (await import(pathToFileURL(storeModule).href)) as {
    SqliteStore: new (options: { path: string; synchronous: 'normal' }) => LedgerStore;
  };
  const folder = mkdtempSync(join(tmpdir(), 'svc-ledger-instructions-'));
  const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  try {
    await store.migrate();
    await createStoreRun(store, { projectId: 'prj_b', runId: 'run_b', workUnitId: 'wku_b' });
    let sequence = 0;
    const call = async () => {
      const attemptId = `att_01J${String(sequence++).padStart(23, '0')}`;
      const at = Date.now();
      await store.reserve({
        attemptId,
        projectId: 'prj_b',
        keyId: 'key_0123456789abcdef',
        runId: 'run_b',
        reservationMicrosUsd: 1000,
        now: at,
        createdAt: iso(at),
        leaseExpiresAt: iso(at + 1e6),
        owner: 'bench-owner',
        endpoint: '/v1/messages',
        alias: 'bench-chat',
        connection: 'sim-chat',
        profile: 'compat.chat-embeddings.v1',
        upstreamModel: 'sim-chat-1',
        eventThresholds: { run: [0.5, 0.8, 1], caps: [0.5, 0.8, 1] },
        attribution: {
          callId: null,
          tags: null,
          route: { index: 0, tried: [], skipped: [] },
          traceId: '0af7651916cd43dd8448eb211c80319c',
        },
      });
      await store.settle({
        attemptId,
        state: 'settled',
        costMicrosUsd: 10,
        usage: { inputTokens: 300, outputTokens: 40, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
        outcome: 'completed',
        httpStatus: 200,
        durationMs: 1,
        settledAt: iso(Date.now()),
        firstByteMs: 1,
        upstreamRequestId: 'req_0123456789',
      });
    };
    const rounds = async (calls: number) => {
      for (let round = 0; round < Math.ceil(calls / PER_COMMIT); round++)
        await Promise.all(Array.from({ length: PER_COMMIT }, call));
    };
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
    await rounds(WARM);
    control('--instr=on');
    await rounds(CALLS);
    control('--instr=off');
    control('--dump');
  } finally {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Main-thread instructions per call of one build's ledger. */
function measure(dist: string): number {
  const folder = mkdtempSync(join(tmpdir(), 'svc-ledger-callgrind-'));
  try {
    execFileSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--separate-threads=yes',
        `--callgrind-out-file=${join(folder, 'out.%p')}`,
        process.execPath,
        '--import',
        'tsx',
        import.meta.filename,
        '--child',
        join(dist, 'src/store/sqlite/sqlite-store.js'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    // One dump per thread: out.<pid>.1-01 is the main thread.
    let main = 0;
    for (const file of readdirSync(folder).filter((name) => name.endsWith('-01'))) {
      const counted = readFileSync(join(folder, file), 'utf8').match(/^totals: (\d+)$/m);
      if (counted) main += Number(counted[1]);
    }
    if (main === 0) throw new Error('callgrind dumped no instructions');
    return main / (Math.ceil(CALLS / PER_COMMIT) * PER_COMMIT);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--child');
  if (at !== -1) return child(process.argv[at + 1]!);
  const dists = (process.argv.length > 2 ? process.argv.slice(2) : ['dist']).map((dist) => resolve(dist));
  const lines = [
    `main-thread instructions per reservation + settlement, ${PER_COMMIT} per group commit, ${CALLS} counted after ${WARM}:`,
  ];
  for (const dist of dists) {
    process.stderr.write(`${dist}: measuring\n`);
    lines.push(`  ${dist}: ${Math.round(measure(dist)).toLocaleString('en-US')}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
