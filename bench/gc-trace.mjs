/**
 * A sampler for `BENCH_NODE_ARGS="--import ./bench/gc-trace.mjs"`: records every garbage collection
 * of the gateway (wall-clock start in ms since the epoch, duration in ms, kind) and writes them to
 * `$BENCH_GC_TRACE/gc-<pid>.txt` when the process exits, to set beside the c1 calls that
 * BENCH_C1_TRACE records (docs/performance.md, "The c1 tail").
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const folder = process.env.BENCH_GC_TRACE;
if (folder) {
  const lines = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      lines.push(
        `${(performance.timeOrigin + entry.startTime).toFixed(3)} ${entry.duration.toFixed(3)} ${entry.detail?.kind ?? ''}`,
      );
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  process.on('exit', () => writeFileSync(join(folder, `gc-${process.pid}.txt`), `${lines.join('\n')}\n`));
}
