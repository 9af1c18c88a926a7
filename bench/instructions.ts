/**
 * Instructions per call of the gateway, counted by valgrind's callgrind: a figure that does not move
 * with the machine's load or speed, for comparing two builds when the machine's noise (often 10-30 %
 * between runs of bench/run.ts) hides a change of a few per cent. Not a speed figure: callgrind
 * counts the instructions of every thread of the process (the main thread, the collector's helpers,
 * the compiler, the checkpoint worker), not the kernel's, nor cache misses.
 *
 * The gateway (SQLite, every call attached to a Run, logging at info to a file) runs under callgrind
 * with instrumentation off; a warm-up lets the JIT settle (a short one leaves TurboFan compiling in
 * the measured window and doubles the figure), then instrumentation is switched on for `N` calls at
 * concurrency `C` from this process, off again, and the counters dumped. The simulator runs natively.
 * A run takes one to two minutes per build. The main thread's figure leaves out the helpers (V8's
 * compiler and collector threads, libuv's pool, the checkpoint worker): TurboFan still compiling in
 * the measured window moves the all-threads figure by up to 5 % between runs of one build, and the
 * main thread's much less, so it is the one to compare code changes by.
 *
 *   node --import tsx bench/instructions.ts [dist ...]     (default: ./dist)
 *   BENCH_CALLS=600 BENCH_WARM=4000 BENCH_CONCURRENCY=16 BENCH_STREAM=1|0
 *   BENCH_MODEL=bench|bench-chat (the alias: vendora -> vendora, or the messages -> chat translation)
 *   BENCH_FACE=messages|chat (POST /v1/messages, or POST /v1/chat/completions to the same alias)
 *   BENCH_CALLGRIND_KEEP=/tmp/cg (keep callgrind's dumps, for `callgrind_annotate /tmp/cg/out.*`)
 *
 * With several dist folders, each is measured in turn with the same load; the figures of one build
 * repeat within a few per cent (the batching of the group commit and the collector's timing still
 * depend on timing).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { request } from 'undici';
import {
  callHeaders,
  chatCallHeaders,
  chatCompletionsBody,
  createRun,
  freePort,
  gatewayConfig,
  messagesBody,
  start,
  twentyDeltaStreams,
} from './harness.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const WARM = Number(process.env.BENCH_WARM ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const STREAM = process.env.BENCH_STREAM !== '0';
const MODEL = process.env.BENCH_MODEL ?? 'bench';
const CHAT_FACE = process.env.BENCH_FACE === 'chat';
const BODY = CHAT_FACE ? chatCompletionsBody(STREAM, MODEL) : messagesBody(STREAM, MODEL);
const ENDPOINT = CHAT_FACE ? '/v1/chat/completions' : '/v1/messages';
/** BENCH_CALLGRIND_KEEP=/folder: copy callgrind's dumps there, for callgrind_annotate. */
const KEEP = process.env.BENCH_CALLGRIND_KEEP;

/** `total` calls at `concurrency`; throws on any answer but 200. */
async function load(url: string, headers: Record<string, string>, total: number, concurrency: number) {
  let left = total;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const response = await request(url, { method: 'POST', headers, body: BODY });
        const text = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}: ${text}`);
      }
    }),
  );
}

/** Starts the gateway of `dist` under callgrind, instrumentation off; resolves once it listens. */
async function startUnderCallgrind(dist: string, folder: string, configPath: string) {
  const log = openSync(join(folder, 'gateway.log'), 'a');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--callgrind-out-file=${join(folder, 'callgrind', 'out.%p')}`,
      process.execPath,
      join(dist, 'src/main.js'),
      'serve',
      '--config',
      configPath,
    ],
    { stdio: ['ignore', log, 'pipe'], cwd: dirname(dist) },
  );
  closeSync(log);
  await new Promise<void>((done, fail) => {
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) done();
    });
    child.once('exit', (code) => fail(new Error(`the gateway exited (${code}): ${output.slice(-2000)}`)));
  });
  return child;
}

async function measure(dist: string, simulatorPort: number): Promise<{ all: number; main: number }> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-instructions-'));
  mkdirSync(join(folder, 'callgrind'));
  const port = await freePort();
  const configPath = join(folder, 'gateway.yaml');
  writeFileSync(
    configPath,
    gatewayConfig({
      folder,
      name: 'instructions',
      port,
      simulatorPort,
      store: `{ kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }`,
      logLevel: 'info',
    }),
  );
  const gateway = await startUnderCallgrind(dist, folder, configPath);
  try {
    const url = `http://127.0.0.1:${port}`;
    const address = { url, key: readFileSync(join(folder, 'key.txt'), 'utf8').trim() };
    const runId = await createRun(address);
    const headers = CHAT_FACE ? chatCallHeaders(address, runId) : callHeaders(address, runId);
    process.stderr.write(`${dist}: warming up (${WARM} calls)\n`);
    await load(`${url}${ENDPOINT}`, headers, WARM, CONCURRENCY);
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [...args, String(gateway.pid)], { stdio: 'pipe' });
    process.stderr.write(`${dist}: measuring (${CALLS} calls)\n`);
    control('--instr=on');
    await load(`${url}${ENDPOINT}`, headers, CALLS, CONCURRENCY);
    control('--instr=off');
    control('--dump');
    // One dump per thread: out.<pid>.1-01 is the main thread, the others V8's and libuv's helpers.
    let total = 0;
    let main = 0;
    for (const file of readdirSync(join(folder, 'callgrind'))) {
      const counted = readFileSync(join(folder, 'callgrind', file), 'utf8').match(/^totals: (\d+)$/m);
      if (!counted) continue;
      total += Number(counted[1]);
      if (file.endsWith('-01')) main += Number(counted[1]);
    }
    if (total === 0) throw new Error('callgrind dumped no instructions');
    if (KEEP) {
      mkdirSync(KEEP, { recursive: true });
      for (const file of readdirSync(join(folder, 'callgrind')))
        writeFileSync(join(KEEP, file), readFileSync(join(folder, 'callgrind', file)));
    }
    return { all: total / CALLS, main: main / CALLS };
  } finally {
    gateway.kill('SIGTERM');
    await new Promise((done) => gateway.once('exit', done));
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main() {
  const dists = (process.argv.length > 2 ? process.argv.slice(2) : ['dist']).map((dist) => resolve(dist));
  const simulatorPort = await freePort();
  const simulator = await start(
    0,
    ['--import', 'tsx', 'src/simulator/main.ts', '--port', String(simulatorPort)],
    'http://',
  );
  try {
    await twentyDeltaStreams(`http://127.0.0.1:${simulatorPort}`);
    const what = STREAM ? 'stream (20 deltas)' : 'unary call';
    const lines = [
      `instructions per ${what} at concurrency ${CONCURRENCY}, ${CALLS} calls after ${WARM}, POST ${ENDPOINT} to ${MODEL}:`,
    ];
    for (const dist of dists) {
      const perCall = await measure(dist, simulatorPort);
      const figure = (value: number) => Math.round(value).toLocaleString('en-US');
      lines.push(`  ${dist}: ${figure(perCall.all)} (main thread ${figure(perCall.main)})`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await simulator.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
