/** Runs sweepObjects on a timer (unref'd); a failed pass is logged and the next one retries. */
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { ObjectStore } from './port.js';
import { type ObjectOwner, sweepObjects } from './sweep.js';

export interface SweeperOptions {
  objects: ObjectStore;
  owners: readonly ObjectOwner[];
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  graceMs: number;
}

export interface Sweeper {
  /** One pass now (also what the timer runs). */
  runOnce(): Promise<void>;
  stop(): void;
}

export function startObjectSweeper(options: SweeperOptions): Sweeper {
  let running: Promise<void> | undefined;
  const runOnce = () => {
    running ??= sweepObjects({
      objects: options.objects,
      owners: options.owners,
      nowMs: options.clock.now(),
      graceMs: options.graceMs,
    })
      .then(
        (result) => {
          if (result.staleParts + result.expired + result.orphans > 0)
            options.logger.info({ ...result }, 'object sweep removed objects');
        },
        (error: unknown) => options.logger.warn({ err: error }, 'object sweep failed; the next pass retries'),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void runOnce(), options.intervalMs);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}
