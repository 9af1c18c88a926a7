/**
 * Messages-facade benchmark. Prints its figures; asserts nothing.
 *
 *   node --import tsx bench/run.ts            (the README's performance section comes from this)
 *
 * Layout on a 2-core machine: the gateway (and, as the reference, the bare pass-through) pinned to
 * core 1 with `taskset -c 1`; the simulator (latency 0) and the load generator on core 0. Every
 * gateway call is attached to a Run on the SQLite store, so each one takes a ledger reservation,
 * a settlement and an audit entry.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request as undiciRequest } from 'undici';

const SIMULATOR_PORT = 9300;
const GATEWAY_PORT = 9301;
const BARE_PORT = 9302;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);

interface Started {
  child: ChildProcess;
  stop(): Promise<void>;
}

function start(
  core: number,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  ready = 'listening',
): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', String(core), process.execPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve({
          child,
          stop: () =>
            new Promise((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited early (${code}): ${output}`)));
  });
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(21);
const body = (stream: boolean) =>
  JSON.stringify({ model: 'bench', max_tokens: 256, stream, messages: [{ role: 'user', content: TEXT }] });

async function load(
  url: string,
  headers: Record<string, string>,
  payload: string,
  connections: number,
  pid?: number,
) {
  const before = pid ? cpuSeconds(pid) : 0;
  const result = await autocannon({
    url,
    method: 'POST',
    headers,
    body: payload,
    connections,
    duration: DURATION,
    pipelining: 1,
  });
  const cpu = pid ? cpuSeconds(pid) - before : 0;
  const requests = result.requests.total;
  return {
    perSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    cpuMsPerCall: pid && requests > 0 ? (cpu * 1000) / requests : 0,
  };
}

/** Sequential calls (concurrency 1), timed with hrtime: p50 and p99 in ms. */
async function sequentialLatency(
  url: string,
  headers: Record<string, string>,
  payload: string,
  samples: number,
) {
  const timings: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = process.hrtime.bigint();
    const response = await undiciRequest(url, { method: 'POST', headers, body: payload });
    await response.body.text();
    timings.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  timings.sort((a, b) => a - b);
  return { p50: timings[Math.floor(samples / 2)]!, p99: timings[Math.floor(samples * 0.99)]! };
}

async function firstTokenLatency(
  url: string,
  headers: Record<string, string>,
  samples: number,
): Promise<{ p50: number; p99: number }> {
  const timings: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = process.hrtime.bigint();
    const response = await undiciRequest(url, { method: 'POST', headers, body: body(true) });
    let first = 0;
    for await (const chunk of response.body) {
      if (!first && chunk.toString().includes('content_block_delta'))
        first = Number(process.hrtime.bigint() - started) / 1e6;
    }
    timings.push(first);
  }
  timings.sort((a, b) => a - b);
  return { p50: timings[Math.floor(samples / 2)]!, p99: timings[Math.floor(samples * 0.99)]! };
}

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const configPath = join(folder, 'bench.yaml');
  writeFileSync(
    configPath,
    `listen: { host: 127.0.0.1, port: ${GATEWAY_PORT} }
store: { kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }
logging: { level: warn }
quickstart: { key_file: ${join(folder, 'key.txt')}, project: prj_bench }
projects:
  - id: prj_bench
    runs: { default_budget_micros_usd: 1000000000000, max_budget_micros_usd: 1000000000000, default_ttl_seconds: 86400, max_ttl_seconds: 86400 }
    rate_limit: { requests_per_second: 100000, burst: 100000 }
connections:
  - { name: sim-vendora, profile: vendora.messages.2023-06-01, base_url: "http://127.0.0.1:${SIMULATOR_PORT}", auth: { scheme: none } }
  - { name: sim-chat, profile: compat.chat-embeddings.v1, base_url: "http://127.0.0.1:${SIMULATOR_PORT}/v1", auth: { scheme: none } }
models:
  - alias: bench
    targets: [{ connection: sim-vendora, model: sim-1, price: { input_per_mtok_micros: 3000000, output_per_mtok_micros: 15000000 } }]
  - alias: bench-chat
    targets: [{ connection: sim-chat, model: sim-chat-1, price: { input_per_mtok_micros: 3000000, output_per_mtok_micros: 15000000 } }]
`,
  );
  const tsx = ['--import', 'tsx'];
  const simulator = await start(
    0,
    [...tsx, 'src/simulator/main.ts', '--port', String(SIMULATOR_PORT)],
    {},
    'http://',
  );
  const gateway = await start(1, ['dist/src/main.js', 'serve', '--config', configPath], {}, 'listening on');
  const bare = await start(
    1,
    [...tsx, 'bench/bare-proxy.ts', String(BARE_PORT), `http://127.0.0.1:${SIMULATOR_PORT}`],
    {},
    'bare proxy',
  );
  try {
    const key = readFileSync(join(folder, 'key.txt'), 'utf8').trim();
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const unit = (await (
      await fetch(`http://127.0.0.1:${GATEWAY_PORT}/svc/v1/work-units`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': 'bench-wu' },
        body: '{}',
      })
    ).json()) as { id: string };
    const run = (await (
      await fetch(`http://127.0.0.1:${GATEWAY_PORT}/svc/v1/runs`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': 'bench-run' },
        body: JSON.stringify({ work_unit_id: unit.id }),
      })
    ).json()) as { id: string };
    const headers = {
      'x-api-key': key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      'x-svc-run-id': run.id,
    };
    await fetch(`http://127.0.0.1:${SIMULATOR_PORT}/_sim/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ behaviour: { deltas: 20, text: 'word '.repeat(40) } }),
    });
    const gatewayUrl = `http://127.0.0.1:${GATEWAY_PORT}/v1/messages`;
    const bareUrl = `http://127.0.0.1:${BARE_PORT}/v1/messages`;
    const directUrl = `http://127.0.0.1:${SIMULATOR_PORT}/v1/messages`;
    const plain = { 'content-type': 'application/json' };

    // warm up both targets (JIT, connection pools, the SQLite file's first pages)
    await load(gatewayUrl, headers, body(false), 16);
    await load(gatewayUrl, headers, body(false).replace('"bench"', '"bench-chat"'), 16);
    await load(gatewayUrl, headers, body(false), 64);
    const results: Record<string, unknown> = {};
    results.bare_c64 = await load(bareUrl, plain, body(false), 64, bare.child.pid);
    results.gateway_c64 = await load(gatewayUrl, headers, body(false), 64, gateway.child.pid);
    const samples = Number(process.env.BENCH_SAMPLES ?? 3000);
    results.direct_c1 = await sequentialLatency(directUrl, plain, body(false), samples);
    results.bare_c1 = await sequentialLatency(bareUrl, plain, body(false), samples);
    results.gateway_c1 = await sequentialLatency(gatewayUrl, headers, body(false), samples);
    results.gateway_chat_c1 = await sequentialLatency(
      gatewayUrl,
      headers,
      body(false).replace('"bench"', '"bench-chat"'),
      samples,
    );
    results.gateway_chat_c64 = await load(
      gatewayUrl,
      headers,
      body(false).replace('"bench"', '"bench-chat"'),
      64,
      gateway.child.pid,
    );
    results.streams_gateway_c16 = await load(gatewayUrl, headers, body(true), 16, gateway.child.pid);
    results.streams_bare_c16 = await load(bareUrl, plain, body(true), 16, bare.child.pid);
    results.first_token_direct = await firstTokenLatency(directUrl, plain, 300);
    results.first_token_gateway = await firstTokenLatency(gatewayUrl, headers, 300);
    const runAfter = (await (
      await fetch(`http://127.0.0.1:${GATEWAY_PORT}/svc/v1/runs/${run.id}`, { headers: auth })
    ).json()) as Record<string, unknown>;
    report(results, runAfter);
  } finally {
    await bare.stop();
    await gateway.stop();
    await simulator.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

function report(results: Record<string, any>, run: Record<string, unknown>) {
  const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(58)} ${value}\n`);
  process.stdout.write(
    `\nsvc gateway benchmark (node ${process.version}, ${DURATION}s per load, 1 KB requests, gateway and bare proxy on core 1)\n\n`,
  );
  line(
    'bare pass-through, c=64, calls/s',
    `${results.bare_c64.perSecond} (CPU ${results.bare_c64.cpuMsPerCall.toFixed(3)} ms/call)`,
  );
  line(
    'gateway (Run attached, ledger+audit), c=64, calls/s',
    `${results.gateway_c64.perSecond} (CPU ${results.gateway_c64.cpuMsPerCall.toFixed(3)} ms/call, non-2xx ${results.gateway_c64.non2xx})`,
  );
  line(
    'gateway, chat-completions target, c=64, calls/s',
    `${results.gateway_chat_c64.perSecond} (CPU ${results.gateway_chat_c64.cpuMsPerCall.toFixed(3)} ms/call)`,
  );
  const ms = (value: number) => value.toFixed(3);
  line(
    'direct to simulator, c=1, p50 / p99 ms',
    `${ms(results.direct_c1.p50)} / ${ms(results.direct_c1.p99)}`,
  );
  line('bare pass-through, c=1, p50 / p99 ms', `${ms(results.bare_c1.p50)} / ${ms(results.bare_c1.p99)}`);
  line('gateway, c=1, p50 / p99 ms', `${ms(results.gateway_c1.p50)} / ${ms(results.gateway_c1.p99)}`);
  line(
    'gateway chat-completions target, c=1, p50 / p99 ms',
    `${ms(results.gateway_chat_c1.p50)} / ${ms(results.gateway_chat_c1.p99)}`,
  );
  line('gateway median overhead over direct, c=1, ms', ms(results.gateway_c1.p50 - results.direct_c1.p50));
  line('bare median overhead over direct, c=1, ms', ms(results.bare_c1.p50 - results.direct_c1.p50));
  line(
    'chat translation median cost over messages target, c=1, ms',
    ms(results.gateway_chat_c1.p50 - results.gateway_c1.p50),
  );
  line(
    'streams of 20 deltas, gateway c=16, streams/s',
    `${results.streams_gateway_c16.perSecond} (CPU ${results.streams_gateway_c16.cpuMsPerCall.toFixed(3)} ms/stream)`,
  );
  line('streams of 20 deltas, bare c=16, streams/s', `${results.streams_bare_c16.perSecond}`);
  line(
    'first token, direct p50 / p99 ms',
    `${results.first_token_direct.p50.toFixed(2)} / ${results.first_token_direct.p99.toFixed(2)}`,
  );
  line(
    'first token, gateway p50 / p99 ms',
    `${results.first_token_gateway.p50.toFixed(2)} / ${results.first_token_gateway.p99.toFixed(2)}`,
  );
  line(
    'Run after the benchmark (committed / reserved / unknown)',
    `${run.committed_micros_usd} / ${run.reserved_micros_usd} / ${run.unknown_attempts}`,
  );
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
