/**
 * The gateway's V8 heap settings (issue 16): how far the old generation grows between two full
 * collections, set here at start-up, and how large the young generation may grow, which node only
 * takes on its command line (YOUNG_GENERATION_FLAG below).
 *
 * Under load the gateway promotes a few MB per second of short-lived request objects (the
 * in-flight calls outlive a scavenge). V8's default growth factor lets that garbage pile up to
 * about four times the live heap before it marks (measured: 28 -> 78 MB of old space for ~26 MB
 * live), and that pile is most of the peak RSS. At 25 % growth the old space stays at 34-39 MB
 * and the full collections it adds cost well under 1 % of the CPU (docs/performance.md, "Fifth
 * round"). The flag is read each time V8 sets a new limit, so setting it at start-up works however
 * the process was launched; an operator's own `--heap-growing-percent` (node's command line or
 * NODE_OPTIONS, 0 = V8's dynamic default) wins.
 */
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 25;

/**
 * Semi-spaces of 8 MB instead of 16 MB: the young generation commits 16 MB instead of 32 MB once
 * load has grown it, with no CPU difference the benchmark can see. V8 sizes the young generation
 * when the process starts, so this flag works only on node's command line: `npm start`,
 * `npm run svc-gateway` and the Docker image pass it; an operator who runs `node dist/src/main.js`
 * or the `svc-gateway` bin (a plain `#!/usr/bin/env node`, which every `env` understands) passes it
 * too or sets NODE_OPTIONS (docs/operations.md, "Memory").
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=8';

const FLAG = /(^|\s)--heap[-_]growing[-_]percent(=|\s|$)/;

/** The flag to set, or undefined when the operator already chose one. */
export function heapGrowingFlag(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string | undefined {
  if (execArgv.some((argument) => FLAG.test(argument)) || FLAG.test(nodeOptions ?? '')) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies the gateway's heap growth unless the operator chose one; returns the flag it set. */
export function applyHeapPolicy(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string | undefined {
  const flag = heapGrowingFlag(execArgv, nodeOptions);
  if (flag !== undefined) v8.setFlagsFromString(flag);
  return flag;
}
