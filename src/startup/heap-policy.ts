/**
 * How far V8 lets the gateway's old generation grow between two full collections (issue 16).
 *
 * Under load the gateway promotes a few MB per second of short-lived request objects (the
 * in-flight calls outlive a scavenge). V8's default growth factor lets that garbage pile up to
 * about four times the live heap before it marks (measured: 28 -> 78 MB of old space for ~26 MB
 * live), and that pile is most of the peak RSS. At 50 % growth the peak under the benchmark fell
 * from 195-210 to 156-166 MB, with CPU per call within the benchmark's noise; 25 % (with a smaller
 * young generation) collected so often that a call cost about a third more (docs/performance.md,
 * "Fifth round"). The flag is read each time V8 sets a new limit, so setting it at start-up works
 * however the process was launched. An operator's own `--heap-growing-percent` on node's command
 * line (0 = V8's dynamic default) wins; node refuses this flag in NODE_OPTIONS.
 */
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/** The flag to set, or undefined when the operator already chose one on node's command line. */
export function heapGrowingFlag(execArgv: readonly string[]): string | undefined {
  if (execArgv.some((argument) => FLAG.test(argument))) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies the gateway's heap growth unless the operator chose one. */
export function applyHeapPolicy(execArgv: readonly string[]): void {
  const flag = heapGrowingFlag(execArgv);
  if (flag !== undefined) v8.setFlagsFromString(flag);
}
