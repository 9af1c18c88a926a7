/**
 * A bounded wait queue in front of the main pool, so that a burst larger than the pool is
 * back-pressure and never "store unreachable":
 * - at most `slots` transactions hold a connection; the next ones wait in arrival order;
 * - a waiter beyond `maxWaiting` is refused at once with `store_busy` (429, Retry-After);
 * - a waiter is refused with `store_busy` after `maxWaitMs` while the database keeps finishing
 *   transactions (it is healthy, just busy);
 * - a waiter is refused as unavailable (503) when no transaction finished for `stallMs` while it
 *   waited: the database stopped answering, which is an outage, not load.
 * node-postgres's own connectionTimeoutMillis then only bounds opening a connection, since a slot
 * guarantees the pool has one free or can open one.
 */
import { GatewayError, StoreUnavailableError } from '../../errors/gateway-error.js';

export interface PoolGateOptions {
  slots: number;
  maxWaiting: number;
  maxWaitMs: number;
  stallMs: number;
}

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout | undefined;
}

export function storeBusy(): GatewayError {
  return new GatewayError(
    'store_busy',
    'Every store connection of this gateway is busy; nothing was written. Retry after Retry-After.',
    { retryAfter: '1' },
  );
}

export class PoolGate {
  private inUse = 0;
  private readonly waiting: Waiter[] = [];
  private lastProgressMs = Date.now();

  constructor(private readonly options: PoolGateOptions) {}

  /** Waits for a slot; release() it exactly once. */
  acquire(): Promise<void> {
    if (this.inUse < this.options.slots && this.waiting.length === 0) {
      this.inUse += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.maxWaiting) return Promise.reject(storeBusy());
    return new Promise((resolve, reject) => {
      const enqueuedMs = Date.now();
      const waiter: Waiter = { grant: resolve, timer: undefined };
      const check = () => {
        const now = Date.now();
        const stalled = now - Math.max(this.lastProgressMs, enqueuedMs) >= this.options.stallMs;
        if (!stalled && now - enqueuedMs < this.options.maxWaitMs) {
          waiter.timer = setTimeout(check, Math.min(this.options.stallMs, this.options.maxWaitMs));
          return;
        }
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(
          stalled
            ? new StoreUnavailableError(`postgres: no transaction finished for ${this.options.stallMs} ms`)
            : storeBusy(),
        );
      };
      waiter.timer = setTimeout(check, Math.min(this.options.stallMs, this.options.maxWaitMs));
      this.waiting.push(waiter);
    });
  }

  /** `progressed`: the transaction reached the database and got an answer (success or a domain error). */
  release(progressed: boolean): void {
    if (progressed) this.lastProgressMs = Date.now();
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant();
    } else this.inUse -= 1;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
