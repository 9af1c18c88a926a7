/**
 * The c1 tail as an outside harness sees it (issue 42): a SQLite gateway (pinned to core 1) takes a
 * c64 load, then sequential calls start after BENCH_WARMUP_SECONDS of untimed ones; the calls are
 * reported in slices of BENCH_SLICE, each with its p50 / p99 / max and the gateway's CPU per call in
 * that slice, so a transient after the load shows as slices that cost
 * more than the last ones. BENCH_NODE_ARGS: node flags for the gateway (e.g. `--trace-deopt`, whose
 * lines go to the gateway's log in the run's folder, kept with BENCH_KEEP=1).
 *
 *   npm run build && node --import tsx bench/c1-tail.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import {
  callHeaders,
  cpuSeconds,
  createRun,
  freePort,
  gatewayConfig,
  load,
  messagesBody,
  pinSelf,
  start,
  twentyDeltaStreams,
  WARM_UP_SECONDS,
} from './harness.js';

const CALLS = Number(process.env.BENCH_SAMPLES ?? 3000);
const SLICE = Number(process.env.BENCH_SLICE ?? 250);
const MODEL = process.env.BENCH_MODEL ?? 'bench';
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

async function main(): Promise<void> {
  pinSelf(0);
  const folder = mkdtempSync(join(tmpdir(), 'svc-c1-tail-'));
  const simulatorPort = await freePort();
  const simulator = await start(
    0,
    ['--import', 'tsx', 'src/simulator/main.ts', '--port', String(simulatorPort)],
    'http://',
  );
  const port = await freePort();
  const config = join(folder, 'gateway.yaml');
  writeFileSync(
    config,
    gatewayConfig({
      folder,
      name: 'gateway',
      port,
      simulatorPort,
      store: `{ kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }`,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
    }),
  );
  const gateway = await start(
    1,
    [...NODE_ARGS, 'dist/src/main.js', 'serve', '--config', config],
    'listening on',
    {},
    join(folder, 'gateway.log'),
  );
  try {
    await twentyDeltaStreams(`http://127.0.0.1:${simulatorPort}`);
    const address = {
      url: `http://127.0.0.1:${port}`,
      key: readFileSync(join(folder, 'key.txt'), 'utf8').trim(),
    };
    const headers = callHeaders(address, await createRun(address));
    const url = `${address.url}/v1/messages`;
    const body = messagesBody(false, MODEL);
    for (const stream of [false, true, false])
      await load({ url, headers, body: messagesBody(stream, MODEL), connections: stream ? 16 : 64 });
    const call = async () => {
      const response = await request(url, { method: 'POST', headers, body });
      await response.body.text();
    };
    const until = performance.now() + WARM_UP_SECONDS * 1000;
    while (performance.now() < until) await call();
    const out = (text: string) => process.stdout.write(`${text}\n`);
    out(`c1 after a c64 load and ${WARM_UP_SECONDS} s of warm-up, slices of ${SLICE} calls (ms):`);
    const all: number[] = [];
    for (let sliceStart = 0; sliceStart < CALLS; sliceStart += SLICE) {
      const cpuBefore = cpuSeconds(gateway.pid);
      const slice: number[] = [];
      for (let index = 0; index < SLICE; index++) {
        const started = performance.now();
        await call();
        slice.push(performance.now() - started);
      }
      all.push(...slice);
      const cpu = ((cpuSeconds(gateway.pid) - cpuBefore) * 1000) / SLICE;
      slice.sort((a, b) => a - b);
      out(
        `  calls ${String(sliceStart).padStart(5)}-${sliceStart + SLICE - 1}: p50 ${slice[SLICE >> 1]!.toFixed(2)}  p99 ${slice[Math.floor(SLICE * 0.99)]!.toFixed(2)}  max ${slice.at(-1)!.toFixed(2)}  CPU ${cpu.toFixed(3)} ms per call`,
      );
    }
    all.sort((a, b) => a - b);
    const at = (q: number) => all[Math.min(all.length - 1, Math.floor(all.length * q))]!.toFixed(2);
    out(
      `all ${all.length}: p50 ${at(0.5)} / p90 ${at(0.9)} / p99 ${at(0.99)} / p99.9 ${at(0.999)} / max ${at(1)}`,
    );
    if (process.env.BENCH_KEEP) out(`gateway log: ${join(folder, 'gateway.log')}`);
  } finally {
    await gateway.stop();
    await simulator.stop();
    if (!process.env.BENCH_KEEP) rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
