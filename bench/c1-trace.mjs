/**
 * What ran on the machine while the slowest c1 calls waited (docs/performance.md, "The c1 tail").
 * It sets the calls that BENCH_C1_TRACE wrote beside a system-wide `perf` recording of the same
 * run and, for each of the slowest calls, says how much CPU each kind of thread took on each core
 * during it: the gateway's event loop, its checkpoint worker, V8's helper threads (concurrent
 * marking, sweeping, compiling), any other process (the load generator and client, the simulator),
 * and how long a core sat idle.
 *
 *   mkdir /tmp/c1 && (BENCH_ONLY=c64,c1 BENCH_C1_TRACE=/tmp/c1 node --import tsx bench/run.ts &) &&
 *     perf record -a -k mono -F 2999 -g -e cpu-clock -o /tmp/c1/perf.data -- sleep 70
 *   node bench/c1-trace.mjs /tmp/c1/perf.data /tmp/c1/c1-<pid>.txt [gateway pid] [slowest calls, 25]
 *
 * bench/run.ts names its processes in pids.txt beside the calls (the gateway, the pass-through, the
 * simulator, the c1 client, itself); a gateway pid given here wins. Each sample stands for 1/2999 s
 * of one core. Needs Linux `perf` able to record all CPUs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [perfData, callsFile, gatewayArg, topArg] = process.argv.slice(2);
if (!perfData || !callsFile) {
  process.stderr.write('usage: node bench/c1-trace.mjs <perf.data> <c1 trace file> [gateway pid] [calls]\n');
  process.exit(2);
}
const SAMPLE_MS = 1000 / 2999;
const top = Number(topArg ?? 25);

// start (epoch ms), latency (ms), start on CLOCK_MONOTONIC (ms)
const calls = readFileSync(callsFile, 'utf8')
  .trim()
  .split('\n')
  .map((line) => line.split(' ').map(Number))
  .filter((fields) => fields.length >= 3)
  .map(([, latency, start], index) => ({ index, start, end: start + latency, latency }));
if (calls.length === 0) throw new Error(`${callsFile} has no monotonic start times (an older trace)`);
const from = Math.min(...calls.map((call) => call.start)) - 10;
const to = Math.max(...calls.map((call) => call.end)) + 10;

const script = execFileSync(
  'perf',
  ['script', '-i', perfData, '-F', 'comm,cpu,pid,tid,time,event,ip,sym', '--max-stack', '16'],
  { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] },
);
/** @type {{cpu: number, pid: number, tid: number, t: number, frames: string[]}[]} */
const samples = [];
/** Each process's command name, by pid. */
const commands = new Map();
let current;
for (const line of script.split('\n')) {
  const head = /^\s*(.*?)\s+(\d+)\/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):/.exec(line);
  if (head) {
    const t = Number(head[5]) * 1000;
    const wanted = head[6] === 'cpu-clock' && t >= from && t <= to;
    current = wanted ? { pid: +head[2], tid: +head[3], cpu: +head[4], t, frames: [] } : undefined;
    if (current) {
      samples.push(current);
      if (!commands.has(current.pid)) commands.set(current.pid, head[1]);
    }
    continue;
  }
  // A frame: its address, then its symbol.
  if (current && line.trim()) current.frames.push(line.trim().split(' ').slice(1).join(' '));
}

/** Each gateway thread's kind, from what its stacks held. */
const roles = new Map();
for (const sample of samples) {
  const stack = sample.frames.join(' ');
  if (/walCheckpoint|sqlite3WalCheckpoint/.test(stack)) roles.set(sample.tid, 'checkpoint worker');
  else if (
    !roles.has(sample.tid) &&
    /PlatformWorkerThread|DefaultJobWorker|ConcurrentMarking|Sweeper/.test(stack)
  )
    roles.set(sample.tid, 'V8 helper threads');
}
const mainThreadSamples = new Map();
for (const sample of samples)
  if (sample.pid === sample.tid && sample.pid !== 0)
    mainThreadSamples.set(sample.pid, (mainThreadSamples.get(sample.pid) ?? 0) + 1);
/** The run's processes by pid, from the pids.txt bench/run.ts writes beside the calls. */
const named = new Map();
try {
  for (const line of readFileSync(join(dirname(callsFile), 'pids.txt'), 'utf8')
    .trim()
    .split('\n')) {
    const at = line.lastIndexOf(' ');
    named.set(Number(line.slice(at + 1)), line.slice(0, at));
  }
} catch {
  // no pids.txt: processes are named by their command
}
const namedGateway = [...named].find(([, name]) => name === 'gateway')?.[0];
const gatewayPid =
  gatewayArg !== undefined
    ? Number(gatewayArg)
    : (namedGateway ?? [...mainThreadSamples].sort((a, b) => b[1] - a[1])[0]?.[0]);

function kind(sample) {
  if (sample.pid === 0) return 'idle';
  if (sample.pid !== gatewayPid) return named.get(sample.pid) ?? `${commands.get(sample.pid)} ${sample.pid}`;
  if (sample.tid === sample.pid) return 'gateway event loop';
  return roles.get(sample.tid) ?? 'gateway, other thread';
}

const slowest = [...calls].sort((a, b) => b.latency - a.latency).slice(0, top);
const blame = new Map();
process.stdout.write(
  `${calls.length} calls, gateway pid ${gatewayPid}; the ${slowest.length} slowest, with the CPU ms each kind of thread took on each core during them:\n`,
);
for (const call of slowest) {
  const during = new Map();
  for (const sample of samples) {
    if (sample.t < call.start || sample.t > call.end) continue;
    const key = `core ${sample.cpu}: ${kind(sample)}`;
    during.set(key, (during.get(key) ?? 0) + SAMPLE_MS);
  }
  const parts = [...during].sort((a, b) => b[1] - a[1]);
  // The call's cause: the largest share that is neither the gateway's own event loop nor an idle core.
  const cause = parts.find(([key]) => !key.endsWith('gateway event loop') && !key.endsWith('idle'));
  const blamed =
    cause && cause[1] >= call.latency / 4 ? cause[0].replace(/^core \d+: /, '') : 'none over a quarter of it';
  blame.set(blamed, (blame.get(blamed) ?? 0) + 1);
  process.stdout.write(
    `#${call.index} ${call.latency.toFixed(2)} ms  ${parts.map(([key, ms]) => `${key} ${ms.toFixed(1)}`).join(', ')}\n`,
  );
}
process.stdout.write(
  '\nslowest calls by what else took the most CPU during them (when over a quarter of the call):\n',
);
for (const [name, count] of [...blame].sort((a, b) => b[1] - a[1]))
  process.stdout.write(`  ${count}  ${name}\n`);
