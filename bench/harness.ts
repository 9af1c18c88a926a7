/**
 * Benchmark plumbing: processes pinned to a core, free ports, CPU and peak RSS from /proc, the
 * autocannon load, sequential latency histograms and time to first token. Asserts nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

export const DURATION = Number(process.env.BENCH_SECONDS ?? 6);

const PRICE = '{ input_per_mtok_micros: 3000000, output_per_mtok_micros: 15000000 }';

export interface GatewayConfigOptions {
  /** Where its key file and data folder go. */
  folder: string;
  /** Names its data folder (several gateways share a folder). */
  name: string;
  port: number;
  simulatorPort: number;
  /** The `store:` value, a YAML flow mapping. */
  store: string;
  logLevel: string;
}

/**
 * A benchmark gateway's configuration: one Project whose Runs no load exhausts and whose rate
 * limit no load reaches, the simulator as the upstream of the alias `bench` (its messages wire)
 * and of `bench-chat` (its chat-completions wire).
 */
export function gatewayConfig(options: GatewayConfigOptions): string {
  const { folder, name, port, simulatorPort, store, logLevel } = options;
  return `listen: { host: 127.0.0.1, port: ${port} }
store: ${store}
data_dir: ${join(folder, `data-${name}`)}
logging: { level: ${logLevel} }
quickstart: { key_file: ${join(folder, 'key.txt')}, project: prj_bench }
projects:
  - id: prj_bench
    runs: { default_budget_micros_usd: 1000000000000, max_budget_micros_usd: 1000000000000, default_ttl_seconds: 86400, max_ttl_seconds: 86400 }
    rate_limit: { requests_per_second: 1000000, burst: 1000000 }
connections:
  - { name: sim-vendora, profile: vendora.messages.2023-06-01, base_url: "http://127.0.0.1:${simulatorPort}", auth: { scheme: none } }
  - { name: sim-chat, profile: compat.chat-embeddings.v1, base_url: "http://127.0.0.1:${simulatorPort}/v1", auth: { scheme: none } }
models:
  - alias: bench
    targets: [{ connection: sim-vendora, model: sim-1, price: ${PRICE} }]
  - alias: bench-chat
    targets: [{ connection: sim-chat, model: sim-chat-1, price: ${PRICE} }]
`;
}

/** A benchmark gateway's address and the quick-start Gateway Key it wrote. */
export interface GatewayAddress {
  url: string;
  key: string;
}

const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(21);

/** The benchmark's call: about 1 KB of text, `max_tokens` 256, to the alias `model`. */
export function messagesBody(stream: boolean, model = 'bench'): string {
  return JSON.stringify({ model, max_tokens: 256, stream, messages: [{ role: 'user', content: TEXT }] });
}

/** The same call on the vendorb chat-completions wire (POST /v1/chat/completions), to the alias `model`. */
export function chatCompletionsBody(stream: boolean, model = 'bench-chat'): string {
  return JSON.stringify({ model, max_tokens: 256, stream, messages: [{ role: 'user', content: TEXT }] });
}

/** The headers of a /v1/chat/completions call (the vendorb SDK's bearer key), attached to `runId` when given. */
export function chatCallHeaders(gateway: GatewayAddress, runId?: string): Record<string, string> {
  return {
    authorization: `Bearer ${gateway.key}`,
    'content-type': 'application/json',
    ...(runId && { 'x-svc-run-id': runId }),
  };
}

/** A fresh Work Unit and a Run in it (the benchmark's budget); returns the Run's id. */
export async function createRun(gateway: GatewayAddress): Promise<string> {
  const post = async (path: string, payload: unknown) =>
    (await (
      await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${gateway.key}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-${Math.random()}`,
        },
        body: JSON.stringify(payload),
      })
    ).json()) as { id: string };
  const unit = await post('/svc/v1/work-units', {});
  return (await post('/svc/v1/runs', { work_unit_id: unit.id })).id;
}

/** The headers of a /v1/messages call to `gateway`, attached to `runId` when given. */
export function callHeaders(gateway: GatewayAddress, runId?: string): Record<string, string> {
  return {
    'x-api-key': gateway.key,
    'vendora-version': '2023-06-01',
    'content-type': 'application/json',
    ...(runId && { 'x-svc-run-id': runId }),
  };
}

/** Sets the simulator's streams to the benchmark's: 20 text deltas. */
export async function twentyDeltaStreams(simulatorUrl: string): Promise<void> {
  await fetch(`${simulatorUrl}/_sim/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ behaviour: { deltas: 20, text: 'word '.repeat(40) } }),
  });
}

export interface Started {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Pins this process, every thread of it, to `core`: the benchmark's own process is the load
 * generator (autocannon) and the c1 client, which belong beside the simulator, off the measured core.
 */
export function pinSelf(core: number): void {
  execFileSync('taskset', ['-a', '-c', '-p', String(core), String(process.pid)], { stdio: 'ignore' });
}

/**
 * Starts `node args` pinned to `core` and resolves once its output contains `ready`. `stdoutFile`:
 * its stdout goes to that file (then `ready` must come on stderr), as an operator's log file would.
 */
export function start(
  core: number,
  args: string[],
  ready: string,
  env: NodeJS.ProcessEnv = {},
  stdoutFile?: string,
): Promise<Started> {
  return new Promise((resolve, reject) => {
    const stdout = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'a');
    const child = spawn('taskset', ['-c', String(core), process.execPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', stdout, 'pipe'],
    });
    if (typeof stdout === 'number') closeSync(stdout);
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes(ready)) return;
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.stdout?.resume();
      child.stderr?.resume();
      child.removeAllListeners('exit');
      resolve({
        child,
        pid: child.pid!,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited early (${code}): ${output}`)));
  });
}

/** A benchmark gateway: its process and its address. */
export interface BenchGateway extends GatewayAddress {
  process: Started;
}

export interface BenchGatewayOptions extends Omit<GatewayConfigOptions, 'port'> {
  /** The core it is pinned to. */
  core: number;
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  /** Its entry point (default: this checkout's build). */
  main?: string;
}

/**
 * Starts `serve` with a benchmark configuration (gatewayConfig) in `folder`, pinned to `core`, its
 * log lines going to a file there as an operator's would (docs/performance.md, "How to measure");
 * resolves once it listens.
 */
export async function startBenchGateway(options: BenchGatewayOptions): Promise<BenchGateway> {
  const { core, env = {}, nodeArgs = [], main = 'dist/src/main.js', ...config } = options;
  const port = await freePort();
  mkdirSync(config.folder, { recursive: true });
  const path = join(config.folder, `${config.name}.yaml`);
  writeFileSync(path, gatewayConfig({ ...config, port }));
  const started = await start(
    core,
    [...nodeArgs, main, 'serve', '--config', path],
    'listening on',
    env,
    join(config.folder, `${config.name}.log`),
  );
  return {
    process: started,
    url: `http://127.0.0.1:${port}`,
    key: readFileSync(join(config.folder, 'key.txt'), 'utf8').trim(),
  };
}

/** User + system CPU seconds of a process (taskset execs node, so the PID is node's). */
export function cpuSeconds(pid: number): number {
  return ticksIn(`/proc/${pid}/stat`) / 100;
}

/** User + system CPU seconds of the process's main thread (its event loop) alone. */
export function mainThreadCpuSeconds(pid: number): number {
  return ticksIn(`/proc/${pid}/task/${pid}/stat`) / 100;
}

function ticksIn(statPath: string): number {
  const fields = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Seconds the process's main thread (its event loop) was runnable but waiting for a core
 * (/proc/<pid>/schedstat, second field, in ns): preemption by whatever shares its core.
 */
export function waitedForCoreSeconds(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
}

/** Peak resident set size (VmHWM) in MB. */
export function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024;
}

export interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpuMsPerCall: number;
  /**
   * Share of the load's time the measured processes' event loops were runnable but waiting for a
   * core (mean over the processes): on one pinned core, what a neighbour on that core took.
   */
  waitedShare: number;
  /**
   * Share of the measured processes' CPU spent outside their main threads (V8's garbage collector
   * and compiler threads, a checkpoint worker, libuv's pool): on one pinned core, it is taken from
   * the event loop.
   */
  helperShare: number;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Processes whose CPU is charged to the load (the gateway, or both replicas). */
  pids?: number[];
  /** Per-connection headers (e.g. a Run id per connection). */
  headersFor?: (connection: number) => Record<string, string>;
  /** Seconds of load (default BENCH_SECONDS). */
  seconds?: number;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const pids = options.pids ?? [];
  const before = pids.map(cpuSeconds);
  const waitedBefore = pids.map(waitedForCoreSeconds);
  const mainBefore = pids.map(mainThreadCpuSeconds);
  const started = performance.now();
  let connection = 0;
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds ?? DURATION,
    pipelining: 1,
    ...(options.headersFor && {
      setupClient: (client: { setHeaders(headers: Record<string, string>): void }) => {
        client.setHeaders({ ...options.headers, ...options.headersFor!(connection++) });
      },
    }),
  });
  const cpu = pids.reduce((sum, pid, index) => sum + cpuSeconds(pid) - before[index]!, 0);
  const waited = pids.reduce((sum, pid, index) => sum + waitedForCoreSeconds(pid) - waitedBefore[index]!, 0);
  const main = pids.reduce((sum, pid, index) => sum + mainThreadCpuSeconds(pid) - mainBefore[index]!, 0);
  const seconds = (performance.now() - started) / 1000;
  const requests = result.requests.total;
  return {
    perSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    cpuMsPerCall: requests > 0 ? (cpu * 1000) / requests : 0,
    waitedShare: pids.length > 0 ? waited / seconds / pids.length : 0,
    helperShare: cpu > 0 ? 1 - main / cpu : 0,
  };
}

export interface Histogram {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /**
   * CPU ms per call of the process that served the calls (all its threads, user and system), when
   * its PID was given: at concurrency 1 nothing is shared between calls, so this is what one call
   * costs on its own, the part of its latency that is work rather than waiting.
   */
  cpuMsPerCall?: number;
}

/** The CPU ms per call a process spent since `before` (its cpuSeconds then), or nothing without a PID. */
function withCpu(result: Histogram, pid: number | undefined, before: number, calls: number): Histogram {
  if (pid === undefined) return result;
  return { ...result, cpuMsPerCall: ((cpuSeconds(pid) - before) * 1000) / calls };
}

function histogram(timings: number[]): Histogram {
  timings.sort((a, b) => a - b);
  const at = (quantile: number) =>
    timings[Math.min(timings.length - 1, Math.floor(timings.length * quantile))]!;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: timings[timings.length - 1]! };
}

/**
 * Untimed sequential calls before a concurrency-1 histogram (BENCH_C1_WARMUP, default 0). An outside
 * harness warms up for BENCH_WARMUP_SECONDS only, as a user's traffic arrives, and so does the
 * benchmark by default; 1000 measures after a thousand untimed calls (docs/performance.md, "How to
 * measure").
 */
export const C1_WARM_UP_CALLS = Number(process.env.BENCH_C1_WARMUP ?? 0);

/** Seconds of the same traffic, untimed, before each measured load or histogram (an outside harness's warm-up). */
export const WARM_UP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

/**
 * BENCH_C1_TRACE=<folder>: each c1 histogram also writes its calls there, one line each: the start
 * (ms since the epoch), the latency (ms) and the start on CLOCK_MONOTONIC (ms, the clock of
 * `perf record -k mono`, which bench/c1-trace.mjs sets the calls beside).
 */
const C1_TRACE = process.env.BENCH_C1_TRACE;

/** With BENCH_C1_TRACE: names a process of the run for bench/c1-trace.mjs (`<name> <pid>` in pids.txt). */
export function traceProcess(name: string, pid: number | undefined): void {
  if (C1_TRACE && pid !== undefined) appendFileSync(join(C1_TRACE, 'pids.txt'), `${name} ${pid}\n`);
}

/** What a sequential call is timed until: its whole answer read, or its first content_block_delta. */
export type Until = 'answer' | 'first_token';

interface C1Client {
  stdin: NodeJS.WritableStream;
  nextLine(): Promise<string>;
  stop(): void;
}
let runningC1Client: C1Client | undefined;

/**
 * The c1 client process (bench/c1-client.mjs) on core 0, started on first use; it ends when its
 * stdin closes (`stopC1Client`, or this process ending).
 */
function c1Client(): C1Client {
  if (runningC1Client) return runningC1Client;
  const child = spawn('taskset', ['-c', '0', process.execPath, join(import.meta.dirname, 'c1-client.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.unref();
  traceProcess('c1 client', child.pid);
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the c1 client exited with ${code}`))),
  );
  exited.catch(() => {});
  lines.on('line', (line) => waiting.shift()?.(line));
  runningC1Client = {
    stdin: child.stdin!,
    nextLine: () => Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited]),
    stop: () => child.stdin!.end(),
  };
  return runningC1Client;
}

/** Ends the c1 client process, if one runs. */
export function stopC1Client(): void {
  runningC1Client?.stop();
  runningC1Client = undefined;
}

/**
 * Sequential calls (concurrency 1), each timed until `until`, after C1_WARM_UP_CALLS untimed ones
 * and WARM_UP_SECONDS of untimed calls; `pid`: the serving process, for its CPU per call (per whole
 * stream for the first token). `label`: names the BENCH_C1_TRACE file. The calls come from a
 * process of their own on core 0 (bench/c1-client.mjs): this one's heap holds the loads' garbage.
 */
export async function sequentialLatency(
  url: string,
  headers: Record<string, string>,
  payload: string,
  samples: number,
  pid?: number,
  until: Until = 'answer',
  label = 'c1',
): Promise<Histogram> {
  const job = {
    url,
    headers,
    payload,
    samples,
    warmUpCalls: C1_WARM_UP_CALLS,
    warmUpSeconds: WARM_UP_SECONDS,
    until,
  };
  const client = c1Client();
  client.stdin.write(`${JSON.stringify(job)}\n`);
  if ((await client.nextLine()) !== 'warm') throw new Error('the c1 client did not warm up');
  const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
  client.stdin.write('go\n');
  const result = await client.nextLine();
  const { timings, starts, monotonicStarts } = JSON.parse(result) as {
    timings: number[];
    starts: number[];
    monotonicStarts: number[];
  };
  if (C1_TRACE) {
    const lines = starts.map(
      (start, index) =>
        `${start.toFixed(3)} ${timings[index]!.toFixed(3)} ${monotonicStarts[index]!.toFixed(3)}`,
    );
    appendFileSync(join(C1_TRACE, `${label}-${process.pid}.txt`), `${lines.join('\n')}\n`);
  }
  return withCpu(histogram(timings), pid, cpuBefore, samples);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
