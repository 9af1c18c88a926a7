/**
 * What observability costs. Prints figures; asserts nothing.
 *
 *   node --import tsx bench/observability.ts        (BENCH_SECONDS per round, default 5)
 *
 * The same gateway (SQLite store, one simulated vendora connection at latency 0, non-streaming
 * Messages calls, every call a ledger reservation, settlement and audit entry) in three
 * configurations: everything off, metrics on and tracing off, metrics and tracing on (every request
 * sampled, spans exported over OTLP/HTTP to a receiver in this process that discards them).
 * Rounds alternate the configurations twice; the gateway process is pinned to core 1 and its CPU
 * time is read from /proc, so "CPU per call" excludes the load generator and the simulator.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { AttemptLabels } from '../src/observability/attempt-observer.js';
import { createObservability } from '../src/observability/observability.js';
import { instrumentStore } from '../src/observability/store-instrumentation.js';
import { startSimulator } from '../src/simulator/server.js';
import type { Store } from '../src/store/port.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEY = `gw_${'B'.repeat(40)}`;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(21);
const BODY = JSON.stringify({ model: 'bench', max_tokens: 256, messages: [{ role: 'user', content: TEXT }] });

type Mode = 'off' | 'metrics' | 'metrics+tracing';

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function configFor(mode: Mode, folder: string, simulatorUrl: string, otlp: string): string {
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    logging: { level: 'warn' },
    store: { kind: 'sqlite', sqlite: { path: join(folder, `${mode}.db`) } },
    data_dir: folder,
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
    metrics: { enabled: mode !== 'off' },
    ...(mode === 'metrics+tracing' ? { tracing: { endpoint: otlp } } : {}),
  };
  const path = join(folder, `${mode}.json`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

function startGatewayProcess(configPath: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'taskset',
      ['-c', '1', process.execPath, '--import', 'tsx', 'bench/observability-gateway.ts', configPath],
      { env: { ...process.env, SVC_BENCH_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\S+)/.exec(output);
      if (match) resolve({ child, url: match[1]! });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`gateway exited (${code}): ${output}`)));
  });
}

async function round(mode: Mode, folder: string, simulatorUrl: string, otlp: string) {
  const { child, url } = await startGatewayProcess(configFor(mode, folder, simulatorUrl, otlp));
  const headers = { 'x-api-key': KEY, 'vendora-version': '2023-06-01', 'content-type': 'application/json' };
  try {
    await autocannon({
      url: `${url}/v1/messages`,
      method: 'POST',
      headers,
      body: BODY,
      connections: 8,
      duration: 1,
    });
    const before = cpuSeconds(child.pid!);
    const result = await autocannon({
      url: `${url}/v1/messages`,
      method: 'POST',
      headers,
      body: BODY,
      connections: 8,
      duration: DURATION,
    });
    const cpu = cpuSeconds(child.pid!) - before;
    return {
      calls: result.requests.total,
      perSecond: result.requests.total / DURATION,
      cpuUsPerCall: (cpu * 1e6) / Math.max(1, result.requests.total),
      failed: result.non2xx + result.errors,
    };
  } finally {
    await new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  }
}

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'svc-bench-obs-'));
  const simulator = await startSimulator({ port: 0 });
  let exported = 0;
  const receiver = createServer((request, response) => {
    request.on('data', () => {});
    request.on('end', () => {
      exported += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const otlp = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  const modes: Mode[] = ['off', 'metrics', 'metrics+tracing'];
  const results = new Map<Mode, Array<Awaited<ReturnType<typeof round>>>>();
  try {
    for (let repeat = 0; repeat < ROUNDS; repeat++)
      for (const mode of modes) {
        const figures = await round(mode, folder, simulator.url, otlp);
        results.set(mode, [...(results.get(mode) ?? []), figures]);
      }
  } finally {
    await simulator.close();
    receiver.close();
    rmSync(folder, { recursive: true, force: true });
  }
  // Medians over the rounds: a shared machine's neighbours disturb single rounds.
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const summary = (mode: Mode) => {
    const rounds = results.get(mode)!;
    return {
      perSecond: median(rounds.map((entry) => entry.perSecond)),
      cpuUsPerCall: median(rounds.map((entry) => entry.cpuUsPerCall)),
      failed: rounds.reduce((sum, entry) => sum + entry.failed, 0),
    };
  };
  if (ROUNDS === 0) {
    process.stdout.write(`metrics path per call, in process: ${(await observerCost()).toFixed(2)} us\n`);
    return;
  }
  const off = summary('off');
  process.stdout.write(
    `observability cost (${DURATION} s x ${ROUNDS} rounds per configuration, medians, 8 connections)\n`,
  );
  for (const mode of modes) {
    const figures = summary(mode);
    const delta = ((figures.cpuUsPerCall - off.cpuUsPerCall) / off.cpuUsPerCall) * 100;
    process.stdout.write(
      `  ${mode.padEnd(16)} ${figures.perSecond.toFixed(0).padStart(6)} calls/s  ${figures.cpuUsPerCall.toFixed(0).padStart(5)} us CPU/call` +
        `  ${mode === 'off' ? '          ' : `${delta >= 0 ? '+' : ''}${delta.toFixed(1)} % CPU`}  failed ${figures.failed}\n`,
    );
  }
  process.stdout.write(`  OTLP export requests received: ${exported}\n`);
  const micro = await observerCost();
  process.stdout.write(
    `  in-process cost of the metrics path per call (observer started+firstByte+settled, 2 instrumented store calls): ${micro.toFixed(2)} us` +
      ` = ${((micro / off.cpuUsPerCall) * 100).toFixed(2)} % of the gateway's CPU per call\n`,
  );
}

/** The metrics work one call adds, timed in a loop (insensitive to neighbours' load, unlike the rounds). */
async function observerCost(): Promise<number> {
  const observability = createObservability({ metrics: true, tracing: false });
  const store = instrumentStore(
    { kind: 'sqlite', reserve: async () => {}, settle: async () => {} } as unknown as Store,
    observability,
  );
  const labels: AttemptLabels = {
    projectId: 'prj_bench',
    keyId: 'key_bench',
    runId: null,
    endpoint: '/v1/messages',
    alias: 'bench',
    connection: 'sim',
    profile: 'vendora.messages.2023-06-01',
    primitive: 'messages',
    upstreamModel: 'up-bench',
    streamed: true,
  };
  const settled = {
    outcome: 'completed' as const,
    costMicrosUsd: 1234,
    reservationMicrosUsd: 5000,
    tokens: { inputTokens: 250, outputTokens: 40, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
    httpStatus: 200,
    errorType: null,
    responseModel: 'up-bench',
    durationMs: 12,
  };
  const run = async (count: number) => {
    for (let index = 0; index < count; index++) {
      await store.reserve({} as never);
      const watch = observability.observer.started('att_x', labels, 5000, undefined);
      watch.firstByte();
      watch.settled(settled);
      await store.settle({} as never);
    }
  };
  await run(20_000);
  const started = process.cpuUsage();
  const count = 200_000;
  await run(count);
  const used = process.cpuUsage(started);
  // The loop's own awaits are counted too, so this over-states the cost slightly.
  return (used.user + used.system) / count;
}

await main();
