/**
 * A bounded wait queue in front of the main pool, so that a burst larger than the pool is
 * back-pressure and never "store unreachable":
 * - at most `slots` transactions hold a connection; the next ones wait in arrival order;
 * - a waiter beyond `maxWaiting` is refused at once with `store_busy` (429, Retry-After);
 * - a waiter is refused with `store_busy` after `maxWaitMs` while the database keeps finishing
 *   transactions (it is healthy, just busy);
 * - waiters are refused as unavailable (503) at once when a transaction ahead of them was refused
 *   a connection (nobody listens: they would meet the same outage), and as a backstop when no
 *   transaction finished for `stallMs` while they waited;
 * - a connection that could not be opened in time while other transactions keep getting answers is
 *   store_busy too (postgres-store.ts): load, not an outage.
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
  refuse: (error: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}

/** How a transaction that held a slot ended. */
export type SlotResult = 'answered' | 'failed' | 'connection_lost';

/** How late a timer may fire before the loop gets a turn to read answers first. */
const LATE_TIMER_MS = 50;

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
      const waiter: Waiter = { grant: resolve, refuse: reject, timer: undefined };
      const period = Math.min(this.options.stallMs, this.options.maxWaitMs);
      let dueMs = enqueuedMs + period;
      const arm = (delayMs: number) => {
        dueMs = Date.now() + delayMs;
        waiter.timer = setTimeout(check, delayMs);
      };
      const check = () => {
        const now = Date.now();
        // A timer that fires late (event loop busy) has answers still queued behind it: let the
        // loop read them before concluding that nothing finished.
        if (now - dueMs > LATE_TIMER_MS) return arm(LATE_TIMER_MS);
        const stalled = now - Math.max(this.lastProgressMs, enqueuedMs) >= this.options.stallMs;
        if (!stalled && now - enqueuedMs < this.options.maxWaitMs) return arm(period);
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(
          stalled
            ? new StoreUnavailableError(`postgres: no transaction finished for ${this.options.stallMs} ms`, {
                uncommitted: true,
              })
            : storeBusy(),
        );
      };
      arm(period);
      this.waiting.push(waiter);
    });
  }

  /**
   * `answered`: the database answered (success or a domain error); `failed`: a timeout or a lost
   * connection; `connection_lost`: the connection was refused (nobody listens), so the waiters are
   * refused now with the same outage instead of each waiting for it in turn.
   */
  release(result: SlotResult): void {
    if (result === 'answered') this.lastProgressMs = Date.now();
    if (result === 'connection_lost') {
      for (const waiter of this.waiting.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.refuse(
          new StoreUnavailableError('postgres: the connection ahead in the queue was lost', {
            uncommitted: true,
          }),
        );
      }
    }
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant();
    } else this.inUse -= 1;
  }

  /** Whether some transaction got an answer from the database in the last `ms`. */
  answeredWithin(ms: number): boolean {
    return Date.now() - this.lastProgressMs < ms;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
