/**
 * Attempt bookkeeping through the store port, used only by the attempt runner (attempt-runner.ts,
 * which holds the settlement table): reserve the worst case (conditional on the Run's budget),
 * settle once with an outcome of the union in money/settlement.ts, renew leases, reap.
 *
 * Settlement and lease renewal never give up on the first store failure: the first try is awaited,
 * later ones run in the background with backoff until the attempt's lease would expire; only then
 * is the attempt left to the reaper (logged), which commits it in full as lease_expired.
 *
 * A reservation the store failed to confirm (unavailable: it may have committed) is in doubt; its
 * call is never sent, and in-doubt.ts releases it as not_sent as soon as the store answers again.
 */
import type { Logger } from 'pino';
import { findProfile } from '../catalogue/profiles.js';
import { GatewayError, ReservationUnavailableError, StoreUnavailableError } from '../errors/gateway-error.js';
import { type Clock, isoTime } from '../lib/clock.js';
import { newTimeOrderedId, randomBase32 } from '../lib/ids.js';
import type { RateTicket } from '../limits/inference-limits.js';
import type { Settlement, SettlementOutcome } from '../money/settlement.js';
import type { SpendCaps } from '../money/spend-caps.js';
import type { EventThresholds } from '../money/thresholds.js';
import {
  type AttemptLabels,
  type AttemptObserver,
  type AttemptWatch,
  noAttemptObserver,
  type RefusalReason,
} from '../observability/attempt-observer.js';
import { noteAttemptReserved, type RequestRecord } from '../observability/request-scope.js';
import type {
  AttemptAttribution,
  ReapedAttempt,
  ReserveInput,
  SettledAttempt,
  SettleInput,
  Store,
} from '../store/port.js';
import { attributionOf } from './attribution.js';
import { InDoubtReservations } from './in-doubt.js';
import { upstreamRequestIdOf } from './upstream-request-id.js';

/** What an attempt is (its observer labels) and what it reserves. One object per attempt. */
export interface AttemptPlan extends AttemptLabels {
  reservationMicrosUsd: number;
  /**
   * The most tokens the call can use (input bound + max output tokens), taken from the tokens-per-
   * minute limits at admission (limits/inference-limits.ts); absent: not priced in tokens (0).
   */
  worstCaseTokens?: number;
  /**
   * The record of the client request the attempt serves (the Caller's, observability/request-scope.ts):
   * its rate-limit state at admission and its log line. Absent for background work.
   */
  request?: RequestRecord | undefined;
  /**
   * The call, tags, route and trace to log with the attempt when it serves no client request of
   * this process (a background job's fallback inherits its first attempt's); otherwise they are
   * read from `request` at reservation.
   */
  attribution?: AttemptAttribution | undefined;
}

function refusalReason(error: unknown): RefusalReason {
  if (error instanceof StoreUnavailableError) return 'store_unavailable';
  const code = error instanceof GatewayError ? error.code : '';
  switch (code) {
    case 'run_budget_exceeded':
    case 'run_not_active':
    case 'run_not_found':
    case 'key_budget_exceeded':
    case 'project_budget_exceeded':
      return code;
    default:
      return 'store_unavailable';
  }
}

export interface LedgerSettings {
  leaseMs: number;
  reaperIntervalMs: number;
  /** The Project's spend caps (configuration), admitted with every reservation (money/spend-caps.ts). */
  projectCaps?: (projectId: string) => SpendCaps | undefined;
  /** The Project's event thresholds (configuration `events`), compared in each reservation's transaction. */
  eventThresholds?: (projectId: string) => EventThresholds;
}

/** The store's state for an outcome: what the settlement does to the Run. */
export function stateOf(outcome: SettlementOutcome): SettleInput['state'] {
  switch (outcome) {
    case 'completed':
    case 'refused_upstream':
      return 'settled';
    case 'not_sent':
      return 'released';
    case 'unknown':
    case 'cancelled_running':
    case 'lease_expired':
      return 'unknown';
    default: {
      const never: never = outcome;
      throw new Error(`unknown settlement outcome ${String(never)}`);
    }
  }
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/** An attempt's observer labels, from what the store kept of it (background settlements, the reaper). */
function labelsOf(settled: SettledAttempt): AttemptLabels {
  return {
    projectId: settled.projectId,
    keyId: settled.keyId,
    runId: settled.runId,
    endpoint: settled.endpoint,
    alias: settled.alias,
    connection: settled.connection,
    profile: settled.profile,
    primitive: findProfile(settled.profile)?.primitive ?? 'unknown',
    upstreamModel: settled.upstreamModel,
    streamed: false,
  };
}

export class Attempt {
  private settled = false;
  private leaseExpiresMs: number;
  private firstByteMs: number | null = null;
  private upstreamRequestId: string | null = null;

  constructor(
    readonly id: string,
    readonly reservationMicrosUsd: number,
    readonly startedMs: number,
    leaseMs: number,
    private readonly ledger: Ledger,
    private readonly watch: AttemptWatch,
    private readonly ticket: RateTicket | undefined,
    /** Counted in the ledger's openAttempts (the process's own calls, not held attempts). */
    private readonly counted: boolean,
  ) {
    this.leaseExpiresMs = startedMs + leaseMs;
  }

  within<T>(fn: () => T): T {
    return this.watch.within(fn);
  }

  /** The answer's headers arrived: the first byte time and the upstream's request id, for the log. */
  firstByte(headers?: Record<string, string | string[] | undefined>): void {
    this.firstByteMs ??= Math.max(0, this.ledger.clock.now() - this.startedMs);
    if (headers) this.upstreamRequestId = upstreamRequestIdOf(headers);
    this.watch.firstByte();
  }

  /** Settles once; later calls are ignored. Store failures are retried (see the header). */
  async settle(settlement: Settlement, responseModel: string | null = null): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    if (this.counted) this.ledger.attemptSettling();
    const now = this.ledger.clock.now();
    const durationMs = now - this.startedMs;
    await this.ledger.persistSettlement(
      {
        attemptId: this.id,
        state: stateOf(settlement.outcome),
        outcome: settlement.outcome,
        costMicrosUsd: settlement.costMicrosUsd,
        usage: settlement.usage,
        httpStatus: settlement.httpStatus,
        durationMs,
        settledAt: isoTime(now),
        firstByteMs: this.firstByteMs,
        upstreamRequestId: this.upstreamRequestId,
      },
      this.leaseExpiresMs,
    );
    if (this.ticket) await this.correctRateTokens(this.ticket, settlement);
    this.watch.settled({
      outcome: settlement.outcome,
      costMicrosUsd:
        stateOf(settlement.outcome) === 'unknown' ? this.reservationMicrosUsd : settlement.costMicrosUsd,
      reservationMicrosUsd: this.reservationMicrosUsd,
      tokens: settlement.usage,
      httpStatus: settlement.httpStatus,
      errorType: settlement.errorType,
      responseModel,
      durationMs,
    });
  }

  /** Tokens-per-minute limits: the worst case taken at admission becomes the actual usage. */
  private async correctRateTokens(ticket: RateTicket, settlement: Settlement): Promise<void> {
    const usage = settlement.usage;
    try {
      await ticket.settle({
        committedWhole: stateOf(settlement.outcome) === 'unknown',
        usedTokens: usage
          ? usage.inputTokens +
            usage.cacheCreationInputTokens +
            usage.cacheReadInputTokens +
            usage.outputTokens
          : null,
      });
    } catch (error) {
      this.ledger.logger.warn(
        { err: error, attempt: this.id },
        'rate limit correction failed (the bucket refills)',
      );
    }
  }

  /** Extends the lease (long streams); a failure is retried until the current lease would pass. */
  async renewLease(): Promise<void> {
    if (this.settled) return;
    const { clock, settings } = this.ledger;
    const leaseExpiresMs = clock.now() + settings.leaseMs;
    const renewed = await this.ledger.retry(
      () => this.ledger.store.renewLease(this.id, isoTime(leaseExpiresMs)),
      this.leaseExpiresMs,
      'lease renewal',
      this.id,
    );
    if (renewed) this.leaseExpiresMs = leaseExpiresMs;
  }
}

export class Ledger {
  /** This process's identity as an attempt owner. */
  readonly owner = `proc_${randomBase32(16)}`;
  private readonly pending = new Map<string, number>();
  private open = 0;
  private reaper: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Reservations the store did not confirm, released as not_sent when it answers again. */
  readonly inDoubt: InDoubtReservations;

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    readonly logger: Logger,
    readonly settings: LedgerSettings,
    readonly observer: AttemptObserver = noAttemptObserver,
  ) {
    this.inDoubt = new InDoubtReservations(store, clock, logger, (released, settledAt) =>
      this.reportReleased(released, settledAt),
    );
  }

  /**
   * The attempts this process reserved for its own calls and has not begun to settle: how many calls
   * it is serving (held attempts of background resources are not counted; they settle by id).
   */
  get openAttempts(): number {
    return this.open;
  }

  /** One of openAttempts begins to settle: it is no longer counted. */
  attemptSettling(): void {
    this.open--;
  }

  /** Reservations this process is taking right now and that are not yet durable. */
  pendingFor(runId: string): number {
    return this.pending.get(runId) ?? 0;
  }

  /**
   * Throws GatewayError run_not_found | run_not_active | run_budget_exceeded | project_budget_exceeded |
   * key_budget_exceeded, or ReservationUnavailableError (a StoreUnavailableError naming the attempt;
   * when in doubt, the reservation is resolved in the background: in-doubt.ts).
   * `ticket`: what the rate limits took at admission, corrected when the attempt settles.
   * `durable`: the attempt belongs to a background job (batch, deferred response) rather than to
   * this process: owned by `job:<resource id>`, so a restart does not reap it, with the given lease.
   */
  async reserve(
    plan: AttemptPlan,
    durable?: { resourceId: string; leaseMs: number },
    ticket?: RateTicket,
  ): Promise<Attempt> {
    const reservationMicrosUsd = plan.reservationMicrosUsd;
    const now = this.clock.now();
    const attemptId = newTimeOrderedId('att', now);
    const leaseMs = durable?.leaseMs ?? this.settings.leaseMs;
    const runId = plan.runId;
    if (runId !== null) this.pending.set(runId, (this.pending.get(runId) ?? 0) + reservationMicrosUsd);
    const input: ReserveInput = {
      projectId: plan.projectId,
      keyId: plan.keyId,
      runId,
      endpoint: plan.endpoint,
      alias: plan.alias,
      connection: plan.connection,
      profile: plan.profile,
      upstreamModel: plan.upstreamModel,
      attemptId,
      reservationMicrosUsd,
      projectCaps: this.settings.projectCaps?.(plan.projectId),
      eventThresholds: this.settings.eventThresholds?.(plan.projectId),
      now,
      createdAt: isoTime(now),
      leaseExpiresAt: isoTime(now + leaseMs),
      owner: durable ? `job:${durable.resourceId}` : this.owner,
      attribution: plan.attribution ?? (plan.request ? attributionOf(plan.request) : undefined),
    };
    try {
      await this.store.reserve(input);
    } catch (error) {
      this.observer.refused(plan, refusalReason(error));
      // Unavailable is no answer: unless the store knows it did not commit, the reservation may
      // have. Either way the call is not sent.
      if (error instanceof StoreUnavailableError) {
        const unavailable = new ReservationUnavailableError(attemptId, error);
        if (unavailable.inDoubt) this.inDoubt.add(input);
        throw unavailable;
      }
      throw error;
    } finally {
      if (runId !== null) {
        const left = (this.pending.get(runId) ?? 0) - reservationMicrosUsd;
        if (left > 0) this.pending.set(runId, left);
        else this.pending.delete(runId);
      }
    }
    noteAttemptReserved(plan.request, attemptId);
    let watch: AttemptWatch;
    if (durable) {
      // Settled later, maybe by another process: reported then by settledHeld (persistHeldSettlement).
      this.observer.held(attemptId, plan, reservationMicrosUsd, plan.request);
      watch = noAttemptObserver.started(attemptId, plan, reservationMicrosUsd, undefined);
    } else {
      watch = this.observer.started(attemptId, plan, reservationMicrosUsd, plan.request);
      this.open++;
    }
    return new Attempt(attemptId, reservationMicrosUsd, now, leaseMs, this, watch, ticket, !durable);
  }

  /** Writes a settlement; retried in the background until `leaseExpiresMs` when the store fails. */
  async persistSettlement(input: SettleInput, leaseExpiresMs: number): Promise<void> {
    await this.retry(() => this.store.settle(input), leaseExpiresMs, 'settlement', input.attemptId);
  }

  /**
   * Writes the settlement of an attempt held by a background resource (retried like
   * persistSettlement). The first settlement to apply, whichever process writes it, is reported
   * to the observer and logged with what the store read back from the attempt row in the same
   * transaction, so metrics equal the audit trail; a settlement that finds the attempt settled
   * already (a cancel raced the job, the sweep, the reaper) wrote nothing and reports nothing.
   */
  async persistHeldSettlement(
    input: SettleInput,
    leaseExpiresMs: number,
    errorType: string | null,
    request: RequestRecord | undefined,
    responseModel: string | null = null,
  ): Promise<void> {
    const write = async () => {
      const settled = await this.store.settleAndRead(input);
      if (settled) this.reportHeld(input, settled, errorType, request, responseModel);
    };
    await this.retry(write, leaseExpiresMs, 'settlement', input.attemptId);
  }

  /**
   * The reaper's full commits: counted in svc_lease_expired_attempts_total and, like any other
   * settlement, in the settlement and cost series with the labels stored with each attempt, so the
   * counters stay equal to the audit trail when a lease passes.
   */
  private reportReaped(reaped: ReapedAttempt[], settledAt: string): void {
    this.observer.leaseExpired(reaped.length);
    for (const attempt of reaped) {
      this.reportHeld(
        {
          attemptId: attempt.attemptId,
          state: 'unknown',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'lease_expired',
          httpStatus: null,
          durationMs: attempt.durationMs,
          settledAt,
        },
        attempt,
        'lease_expired',
        undefined,
      );
    }
  }

  /**
   * Reservations in doubt that the store had committed, now released (in-doubt.ts): the store
   * admitted them, so they count as admitted and settled not_sent (nothing committed), like every
   * attempt of the audit trail; their refusal (store_unavailable) stays counted too, as the client
   * saw it.
   */
  private reportReleased(released: ReapedAttempt[], settledAt: string): void {
    for (const attempt of released) {
      try {
        this.observer.held(attempt.attemptId, labelsOf(attempt), attempt.reservationMicrosUsd, undefined);
      } catch (error) {
        this.logger.warn({ err: error, attempt: attempt.attemptId }, 'observer failed on a release');
      }
      this.reportHeld(
        {
          attemptId: attempt.attemptId,
          state: 'released',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'not_sent',
          httpStatus: null,
          durationMs: attempt.durationMs,
          settledAt,
        },
        attempt,
        'reservation_in_doubt',
        undefined,
      );
    }
  }

  private reportHeld(
    input: SettleInput,
    settled: SettledAttempt,
    errorType: string | null,
    request: RequestRecord | undefined,
    responseModel: string | null = null,
  ): void {
    const labels = labelsOf(settled);
    try {
      this.observer.settledHeld(
        input.attemptId,
        labels,
        Date.parse(settled.createdAt),
        {
          outcome: input.outcome,
          costMicrosUsd: settled.committedMicrosUsd,
          reservationMicrosUsd: settled.reservationMicrosUsd,
          tokens: input.usage,
          httpStatus: input.httpStatus,
          errorType,
          responseModel,
          durationMs: input.durationMs,
        },
        request,
      );
    } catch (error) {
      this.logger.warn(
        { err: error, attempt: input.attemptId },
        'observer failed on a background settlement',
      );
    }
    // Background attempts settle outside any request: this is their log line.
    this.logger.info(
      {
        project: settled.projectId,
        key: settled.keyId,
        run: settled.runId,
        endpoint: settled.endpoint,
        alias: settled.alias,
        connection: settled.connection,
        attempt: input.attemptId,
        outcome: input.outcome,
        cost_micros_usd: settled.committedMicrosUsd,
        reservation_micros_usd: settled.reservationMicrosUsd,
        ...(input.usage
          ? {
              input_tokens: input.usage.inputTokens,
              output_tokens: input.usage.outputTokens,
              cache_creation_input_tokens: input.usage.cacheCreationInputTokens,
              cache_read_input_tokens: input.usage.cacheReadInputTokens,
            }
          : {}),
        ms: input.durationMs,
      },
      input.outcome === 'lease_expired'
        ? 'attempt committed by the reaper'
        : errorType === 'reservation_in_doubt'
          ? 'reservation in doubt released (the call was never sent)'
          : 'background attempt settled',
    );
  }

  /**
   * Runs `write` once (awaited); when it fails, again in the background with backoff until the
   * lease would expire (by the clock, and at most one lease of real time), then gives up to the
   * reaper with a log line. Resolves true when the awaited try succeeded.
   */
  async retry(
    write: () => Promise<void>,
    leaseExpiresMs: number,
    what: string,
    attemptId: string,
  ): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      this.logger.warn(
        { err: error, attempt: attemptId },
        `${what} failed; retrying until the lease expires`,
      );
    }
    const realDeadline = performance.now() + this.settings.leaseMs;
    let delay = FIRST_RETRY_MS;
    const again = () => {
      if (
        this.stopped ||
        this.clock.now() + delay >= leaseExpiresMs ||
        performance.now() + delay >= realDeadline
      ) {
        this.logger.error(
          { attempt: attemptId },
          `${what} still failing as the lease expires; the reaper will commit the reservation`,
        );
        return;
      }
      const timer = setTimeout(() => {
        write().then(
          () => this.logger.info({ attempt: attemptId }, `${what} succeeded on retry`),
          () => {
            delay = Math.min(delay * 2, MAX_RETRY_MS);
            again();
          },
        );
      }, delay);
      timer.unref();
    };
    again();
    return false;
  }

  /** Starts the periodic reaper. `reclaimOthers`: also reap attempts of previous processes now (SQLite). */
  async startReaper(reclaimOthers: boolean): Promise<void> {
    const nowIso = () => isoTime(this.clock.now());
    if (reclaimOthers) {
      const now = nowIso();
      const reaped = await this.store.reapExpiredAttempts(now, this.owner);
      if (reaped.length > 0) {
        this.reportReaped(reaped, now);
        this.logger.warn(
          { reaped: reaped.length },
          'committed the reservations of attempts left by a previous process',
        );
      }
    }
    this.reaper = setInterval(() => {
      const now = nowIso();
      this.store.reapExpiredAttempts(now).then(
        (reaped) => {
          if (reaped.length > 0) {
            this.reportReaped(reaped, now);
            this.logger.warn(
              { reaped: reaped.length },
              'committed the reservations of attempts whose lease expired',
            );
          }
        },
        (error: unknown) => this.logger.warn({ err: error }, 'reaper could not reach the store'),
      );
    }, this.settings.reaperIntervalMs);
    this.reaper.unref();
  }

  /** Stops the reaper and every background retry (the store is about to close). */
  stopReaper(): void {
    this.stopped = true;
    this.inDoubt.stop();
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = undefined;
  }
}
