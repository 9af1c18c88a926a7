/**
 * What body capture adds to a call's latency. Prints figures; asserts nothing.
 *
 *   node --import tsx bench/capture.ts        (BENCH_CALLS per configuration, default 1500)
 *
 * Two gateways in this process (each: SQLite store, local objects folder, one simulated vendora
 * connection at latency 0), capture off and capture on (default limits: 1 MiB per body). Calls
 * alternate between them, one at a time, half non-streamed and half streamed, with a ~10 KB prompt,
 * each timed from the request to the last byte of the answer; 200 warm-up calls first. Also: the
 * time to tap one text body of several sizes (the only capture work on a call's path besides one
 * queue offer).
 * The capture's background write (sealing, the object-store put) runs in the same process and
 * event loop as the calls, so its share of the CPU is inside the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { BodyTap } from '../src/capture/body-tap.js';
import { parseConfig } from '../src/config/load.js';
import { type RunningGateway, startGateway } from '../src/gateway-server.js';
import { createLogger } from '../src/lib/logger.js';
import { startSimulator } from '../src/simulator/server.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 1500);
const KEY = `gw_${'C'.repeat(40)}`;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(220);
const body = (stream: boolean) =>
  JSON.stringify({ model: 'bench', max_tokens: 256, stream, messages: [{ role: 'user', content: TEXT }] });

async function start(capture: boolean, parent: string, simulatorUrl: string): Promise<RunningGateway> {
  const folder = join(parent, capture ? 'on' : 'off');
  const environment = { SVC_BENCH_KEY: KEY, SVC_BENCH_SEALING: 'ab'.repeat(32) };
  const raw = {
    listen: { host: '127.0.0.1', port: 0 },
    logging: { level: 'warn' },
    store: { kind: 'sqlite', sqlite: { path: join(folder, `${capture ? 'on' : 'off'}.db`) } },
    data_dir: folder,
    objects: { sealing_key_env: 'SVC_BENCH_SEALING' },
    projects: [
      {
        id: 'prj_bench',
        runs: {
          default_budget_micros_usd: 1_000_000,
          max_budget_micros_usd: 1_000_000_000,
          default_ttl_seconds: 3600,
          max_ttl_seconds: 86400,
        },
        rate_limit: { requests_per_second: 1000, burst: 1000 },
        capture: { enabled: capture },
      },
    ],
    keys: [{ id: 'key_bench', project: 'prj_bench', scopes: ['inference'], secret_env: 'SVC_BENCH_KEY' }],
    connections: [
      {
        name: 'sim',
        profile: 'vendora.messages.2023-06-01',
        base_url: simulatorUrl,
        auth: { scheme: 'none' },
      },
    ],
    models: [
      {
        alias: 'bench',
        targets: [
          {
            connection: 'sim',
            model: 'up-bench',
            price: {
              input_per_mtok_micros: 3_000_000,
              output_per_mtok_micros: 15_000_000,
              cache_write_per_mtok_micros: 3_750_000,
              cache_read_per_mtok_micros: 300_000,
              request_fee_micros: 0,
            },
          },
        ],
      },
    ],
  };
  const logger = createLogger('warn', new Writable({ write: (_chunk, _encoding, done) => done() }));
  return startGateway({ config: parseConfig(raw, 'bench', environment), environment, logger });
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

type Times = { json: number[]; stream: number[] };

/** One call to `url`, timed from the request to the last byte of the answer. */
async function timedCall(url: string, stream: boolean): Promise<number> {
  const headers = { 'x-api-key': KEY, 'vendora-version': '2023-06-01', 'content-type': 'application/json' };
  const started = performance.now();
  const response = await fetch(`${url}/v1/messages`, { method: 'POST', headers, body: body(stream) });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return performance.now() - started;
}

/** Calls alternate between the two gateways (paired: both see the same machine load). */
async function rounds(off: string, on: string, calls: number): Promise<{ off: Times; on: Times }> {
  const times = { off: { json: [], stream: [] } as Times, on: { json: [], stream: [] } as Times };
  for (let index = 0; index < calls; index++) {
    const stream = index % 2 === 1;
    const kind = stream ? 'stream' : 'json';
    times.off[kind].push(await timedCall(off, stream));
    times.on[kind].push(await timedCall(on, stream));
  }
  return times;
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return `mean ${mean.toFixed(2)} ms  p50 ${percentile(sorted, 0.5).toFixed(2)} ms  p99 ${percentile(sorted, 0.99).toFixed(2)} ms`;
}

/** The work capture adds on a call's path: tapping both bodies (a copy of at most max_body_bytes each). */
function tapCost(bytes: number): number {
  const text = 'x'.repeat(bytes);
  const rounds = Math.max(20, Math.floor(200_000_000 / bytes));
  const started = performance.now();
  for (let index = 0; index < rounds; index++) new BodyTap(1024 * 1024).add(text);
  return (performance.now() - started) / rounds;
}

const simulator = await startSimulator({ port: 0 });
const folder = mkdtempSync(join(tmpdir(), 'svc-bench-capture-'));
try {
  const off = await start(false, folder, simulator.url);
  const on = await start(true, folder, simulator.url);
  try {
    await rounds(off.url, on.url, 200); // warm-up
    const results = await rounds(off.url, on.url, CALLS);
    console.log(
      `body capture: ${CALLS} calls to each gateway, alternating, half streamed; request ${body(false).length} bytes`,
    );
    for (const bytes of [10_000, 100_000, 1024 * 1024, 4 * 1024 * 1024])
      console.log(
        `tapping one ${bytes}-byte text body (limit 1 MiB): ${(tapCost(bytes) * 1000).toFixed(1)} us`,
      );
    for (const mode of ['off', 'on'] as const) {
      console.log(`capture ${mode.padEnd(3)} non-streamed: ${summary(results[mode].json)}`);
      console.log(`capture ${mode.padEnd(3)} streamed:     ${summary(results[mode].stream)}`);
    }
  } finally {
    await off.close();
    await on.close();
  }
} finally {
  await simulator.close();
  rmSync(folder, { recursive: true, force: true });
}
