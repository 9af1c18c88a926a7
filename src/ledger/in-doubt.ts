/**
 * Reservations in doubt: store.reserve failed as unavailable and the store does not know whether
 * the reservation committed (the connection died after the statement was sent: the database may
 * have run it, or not got it); a failure the store knows did not commit (no connection, nothing
 * sent, no COMMIT sent: StoreUnavailableError.uncommitted) is not in doubt. The call was not sent either way: the runner sends only after reserve
 * resolves. Such a reservation must not wait for its lease (15 minutes by default) and then be
 * committed in full by the reaper as lease_expired.
 *
 * This process remembers every reservation in doubt and hands them to store.releaseInDoubt (one
 * transaction for up to MAX_BATCH of them): a committed one is released as not_sent (nothing
 * charged, the Run's and the caps' reservations given back, an audit entry), an absent one gets a
 * tombstone so that it can never commit later. It tries FIRST_RETRY_MS after the failure, then with
 * backoff capped at MAX_RETRY_MS for as long as the process runs, so each reservation is resolved
 * at most MAX_RETRY_MS (plus the one try still waiting for a dead connection, bounded by the store's
 * timeouts) after the store answers again. Nothing is written on the hot path: only failed
 * reservations cost a write, after the outage.
 *
 * What this cannot cover (docs/operations.md): a process that stops while reservations are in doubt
 * (crash, kill, shutdown during the outage) or an outage longer than the lease leaves the ones that
 * committed to the reaper, which commits them in full as lease_expired when their lease passes
 * (SQLite: at the next start).
 */
import type { Logger } from 'pino';
import { type Clock, isoTime } from '../lib/clock.js';
import type { ReapedAttempt, ReserveInput, Store } from '../store/port.js';

export const FIRST_RETRY_MS = 100;
/** The longest wait between two tries: the bound, once the store answers again. */
export const MAX_RETRY_MS = 1_000;
const MAX_BATCH = 256;
/**
 * A safety net for memory: only reservations sent on a connection that then failed are in doubt (a
 * few per connection per outage); past this many, more are left to the reaper (logged).
 */
const MAX_WAITING = 100_000;

export class InDoubtReservations {
  private readonly waiting = new Map<string, ReserveInput>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private current: Promise<void> | undefined;
  private stopped = false;
  private delay = FIRST_RETRY_MS;
  /** A failing episode is logged once, when it starts (and its end when it resolves). */
  private failing = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Told about the attempts the store had reserved and that are now released (metrics, log). */
    private readonly released: (attempts: ReapedAttempt[], settledAt: string) => void,
  ) {}

  /** Reservations waiting to be resolved. */
  get size(): number {
    return this.waiting.size;
  }

  add(input: ReserveInput): void {
    if (this.stopped) return;
    if (this.waiting.size >= MAX_WAITING) {
      this.logger.error(
        { attempt: input.attemptId, in_doubt: this.waiting.size },
        'too many reservations in doubt; this one is left to the reaper',
      );
      return;
    }
    this.waiting.set(input.attemptId, input);
    this.logger.info(
      { attempt: input.attemptId, in_doubt: this.waiting.size },
      'reservation in doubt (the store did not confirm it); releasing it as not_sent when the store answers',
    );
    this.schedule();
  }

  /** One last try before a shutdown closes the store; what it cannot resolve stays to stop(). */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
    if (this.waiting.size > 0 && !this.stopped) await this.resolve();
  }

  /** Stops trying (the store is about to close); what is still waiting is left to the reaper. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting.size > 0)
      this.logger.error(
        { in_doubt: this.waiting.size, attempts: [...this.waiting.keys()].slice(0, 20) },
        'stopping with reservations in doubt; the reaper commits those that committed when their lease passes',
      );
  }

  private schedule(): void {
    if (this.timer !== undefined || this.running || this.stopped || this.waiting.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.current = this.resolve();
    }, this.delay);
    this.timer.unref();
  }

  private async resolve(): Promise<void> {
    this.running = true;
    const batch = [...this.waiting.values()].slice(0, MAX_BATCH);
    const settledAt = isoTime(this.clock.now());
    let released: ReapedAttempt[];
    try {
      released = await this.store.releaseInDoubt(batch, settledAt);
    } catch (error) {
      this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
      if (!this.failing)
        this.logger.warn(
          { err: error, in_doubt: this.waiting.size },
          'cannot resolve reservations in doubt yet; retrying until the store answers',
        );
      this.failing = true;
      this.running = false;
      this.schedule();
      return;
    }
    for (const input of batch) this.waiting.delete(input.attemptId);
    this.delay = FIRST_RETRY_MS;
    this.failing = false;
    this.running = false;
    this.logger.info(
      { resolved: batch.length, released: released.length, in_doubt: this.waiting.size },
      'reservations in doubt resolved: nothing charged',
    );
    this.schedule();
    this.released(released, settledAt);
  }
}
