/**
 * Attempt bookkeeping through the store port.
 *
 *   reserve (worst case, conditional on the Run's budget)  ->  upstream call  ->  settle once:
 *     settled   the upstream reported usage: commit its cost, release the rest
 *     unknown   the cost cannot be known (lost mid-stream, client gone, timeout after sending):
 *               commit the whole reservation, count it in unknown_attempts
 *     released  certain that nothing reached the upstream (connect refused): commit nothing
 *
 * Every attempt carries a lease. A stream renews it while it runs; an attempt whose lease passes
 * unsettled (process died, store blipped during settle) is committed in full by the reaper.
 */
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { newId, randomBase32 } from '../lib/ids.js';
import type { AttemptUsage, SettleInput, Store } from '../store/port.js';
import type { SpendCaps } from './spend-caps.js';

export interface AttemptSubject {
  projectId: string;
  keyId: string;
  runId: string | null;
  endpoint: string;
  alias: string;
  connection: string;
  profile: string;
  upstreamModel: string;
}

export interface Settlement {
  state: SettleInput['state'];
  costMicrosUsd: number;
  usage: AttemptUsage | null;
  outcome: string;
  httpStatus: number | null;
}

export interface LedgerSettings {
  leaseMs: number;
  reaperIntervalMs: number;
  /** The Project's spend caps (configuration), admitted with every reservation (spend-caps.ts). */
  projectCaps?: (projectId: string) => SpendCaps | undefined;
}

export class Attempt {
  private settled = false;
  private readonly startedMs: number;

  constructor(
    readonly id: string,
    readonly reservationMicrosUsd: number,
    private readonly ledger: Ledger,
  ) {
    this.startedMs = ledger.clock.now();
  }

  /** Settles once; later calls are ignored. A store failure leaves the lease to the reaper. */
  async settle(settlement: Settlement): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const now = this.ledger.clock.now();
    try {
      await this.ledger.store.settle({
        attemptId: this.id,
        ...settlement,
        durationMs: now - this.startedMs,
        settledAt: new Date(now).toISOString(),
      });
    } catch (error) {
      this.ledger.logger.error(
        { err: error, attempt: this.id },
        'settlement failed; the reaper will commit the reservation',
      );
    }
  }

  async renewLease(): Promise<void> {
    if (this.settled) return;
    await this.ledger.store.renewLease(
      this.id,
      new Date(this.ledger.clock.now() + this.ledger.settings.leaseMs).toISOString(),
    );
  }
}

export class Ledger {
  /** This process's identity as an attempt owner. */
  readonly owner = `proc_${randomBase32(16)}`;
  private readonly pending = new Map<string, number>();
  private reaper: NodeJS.Timeout | undefined;

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    readonly logger: Logger,
    readonly settings: LedgerSettings,
  ) {}

  /** Reservations this process is taking right now and that are not yet durable. */
  pendingFor(runId: string): number {
    return this.pending.get(runId) ?? 0;
  }

  /**
   * Throws GatewayError run_not_found | run_not_active | run_budget_exceeded | project_budget_exceeded |
   * key_budget_exceeded, or StoreUnavailableError.
   * `durable`: the attempt belongs to a background job (batch, deferred response) rather than to
   * this process: owned by `job:<resource id>`, so a restart does not reap it, with the given lease.
   */
  async reserve(
    subject: AttemptSubject,
    reservationMicrosUsd: number,
    durable?: { resourceId: string; leaseMs: number },
  ): Promise<Attempt> {
    const attemptId = newId('att');
    const now = this.clock.now();
    const runId = subject.runId;
    if (runId !== null) this.pending.set(runId, (this.pending.get(runId) ?? 0) + reservationMicrosUsd);
    try {
      await this.store.reserve({
        ...subject,
        attemptId,
        reservationMicrosUsd,
        projectCaps: this.settings.projectCaps?.(subject.projectId),
        now,
        createdAt: new Date(now).toISOString(),
        leaseExpiresAt: new Date(now + (durable?.leaseMs ?? this.settings.leaseMs)).toISOString(),
        owner: durable ? `job:${durable.resourceId}` : this.owner,
      });
    } finally {
      if (runId !== null) {
        const left = (this.pending.get(runId) ?? 0) - reservationMicrosUsd;
        if (left > 0) this.pending.set(runId, left);
        else this.pending.delete(runId);
      }
    }
    return new Attempt(attemptId, reservationMicrosUsd, this);
  }

  /** Starts the periodic reaper. `reclaimOthers`: also reap attempts of previous processes now (SQLite). */
  async startReaper(reclaimOthers: boolean): Promise<void> {
    const nowIso = () => new Date(this.clock.now()).toISOString();
    if (reclaimOthers) {
      const reaped = await this.store.reapExpiredAttempts(nowIso(), this.owner);
      if (reaped > 0)
        this.logger.warn({ reaped }, 'committed the reservations of attempts left by a previous process');
    }
    this.reaper = setInterval(() => {
      this.store.reapExpiredAttempts(nowIso()).then(
        (reaped) => {
          if (reaped > 0)
            this.logger.warn({ reaped }, 'committed the reservations of attempts whose lease expired');
        },
        (error: unknown) => this.logger.warn({ err: error }, 'reaper could not reach the store'),
      );
    }, this.settings.reaperIntervalMs);
    this.reaper.unref();
  }

  stopReaper(): void {
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = undefined;
  }
}
