/**
 * The V8 settings `svc-gateway serve` applies at start-up (issue 16: the peak RSS, and a collector
 * that took a fifth of a process's CPU). Each is skipped when the operator gave the same flag, in
 * either polarity, on node's command line; node refuses them in NODE_OPTIONS, so the command line
 * is the only override. Each is read by V8 when it uses it (a new heap limit, a WebAssembly
 * tier-up, a scavenge's pretenuring decisions), so setting them from the running process works
 * however it was launched.
 *
 * - Old-generation growth 50 %. Under load the gateway promotes a few MB per second of short-lived
 *   request objects (the in-flight calls outlive a scavenge). V8's default growth factor lets that
 *   garbage pile up to about four times the live heap before it marks (measured: 28 -> 78 MB of old
 *   space for ~26 MB live), and that pile was most of the peak RSS. At 50 % the peak under the
 *   benchmark fell from 195-210 to 156-166 MB, with CPU per call within the benchmark's noise; 25 %
 *   (with a smaller young generation) collected so often that a call cost about a third more
 *   (docs/performance.md, "V8 and memory").
 * - No loop unrolling when V8 optimizes WebAssembly. The only WebAssembly the gateway runs is the
 *   HTTP response parser of its upstream client (undici's llhttp). Once it is hot, V8 recompiles its
 *   33 KB main function with TurboFan on a background thread: 200-390 ms of CPU and a 29 MB compiler
 *   zone, malloc'd in that thread's arena, which was the largest single piece of the peak RSS under
 *   the c64 and stream loads (a 36 MB arena beside 63 MB of V8 heap). Without unrolling the zone is
 *   20 MB, the compile takes half the time, and that peak fell by 9-12 MB, with CPU per call
 *   unchanged (alternating turns, both ways round; docs/performance.md, "Comparing two builds").
 * - No allocation-site pretenuring. V8 watches how many objects from each allocation site (an
 *   object or array literal in a function) survive a scavenge; past a threshold it decides, for good,
 *   to allocate that site's objects straight in the old generation. One gateway process in three or
 *   four, from its first, cold load on, promoted a fifth of what each call allocates and marked its
 *   old generation every 0.4 s for life, its collector threads taking 22-28 % of its CPU instead of
 *   7-9 % (25-40 % fewer calls/s); without pretenuring none of 20 did (docs/performance.md, "V8 and
 *   memory"). Most likely such a process had pretenured a per-call literal: its objects born old
 *   keep what they point to alive through every scavenge until a full collection. The gateway's
 *   objects live for one call or for the process, so it has nothing to gain from the decision.
 * - Scavenges on the event loop alone while the process may run on one core only (its CPU affinity,
 *   e.g. `taskset`, a container's cpuset), checked at start-up and every 10 s. V8 otherwise splits a
 *   scavenge into tasks for its helper threads, which on one core can only take turns with the
 *   event loop: at c1 after a load the gateway's p99 was 1.24-1.48 ms with them off against
 *   1.50-1.62 with them on (two runs each way), at the same CPU per call at c64 and per stream at
 *   c16 (alternating turns: 1.009 and 0.996). With more cores they shorten the pause, so they stay.
 */
import { availableParallelism } from 'node:os';
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

interface StartupFlag {
  /** The setting, as V8 takes it. */
  flag: string;
  /** Matches the operator's own flag of the same name on node's command line (either polarity). */
  chosen: RegExp;
}

export const STARTUP_FLAGS: readonly StartupFlag[] = [
  {
    flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    chosen: /^--heap[-_]growing[-_]percent(=|$)/,
  },
  { flag: '--no-wasm-loop-unrolling', chosen: /^--(no[-_])?wasm[-_]loop[-_]unrolling(=|$)/ },
  {
    flag: '--no-allocation-site-pretenuring',
    chosen: /^--(no[-_])?allocation[-_]site[-_]pretenuring(=|$)/,
  },
];

/** The flags to set: every start-up flag the operator did not choose on node's command line. */
export function startupFlags(execArgv: readonly string[]): string[] {
  return STARTUP_FLAGS.filter(({ chosen }) => !execArgv.some((argument) => chosen.test(argument))).map(
    ({ flag }) => flag,
  );
}

/** The operator chose parallel scavenging (either polarity) on node's command line. */
export function scavengeChosen(execArgv: readonly string[]): boolean {
  return execArgv.some((argument) => /^--(no[-_])?parallel[-_]scavenge$/.test(argument));
}

/** The scavenge flag for a process that may run on `cores` cores. */
export function scavengeFlag(cores: number): string {
  return cores <= 1 ? '--no-parallel-scavenge' : '--parallel-scavenge';
}

/** How often the process's CPU affinity is read again (an operator may pin a running process). */
const AFFINITY_CHECK_MS = 10_000;

/**
 * Applies the gateway's V8 settings, each unless the operator chose it. Returns a stop function for
 * the affinity check (its timer never keeps the process alive).
 */
export function applyV8Policy(execArgv: readonly string[], cores = availableParallelism): () => void {
  for (const flag of startupFlags(execArgv)) v8.setFlagsFromString(flag);
  if (scavengeChosen(execArgv)) return () => {};
  let applied = '';
  const apply = () => {
    const flag = scavengeFlag(cores());
    if (flag !== applied) v8.setFlagsFromString(flag);
    applied = flag;
  };
  apply();
  const timer = setInterval(apply, AFFINITY_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
