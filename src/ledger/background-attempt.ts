/**
 * Background attempts: the ledger attempt a deferred response or a batch holds across processes,
 * owned by its job (`job:<resource id>`, so a restart does not reap it) and settled by id from
 * whichever process ends it. The job says what happened with a verb; this file decides the outcome
 * (the union in attempt-observer.ts) and the charge, so the experimental wing names no settlement:
 *
 *   runner.hold(plan, id, lease)  reserve the worst case (the inference rate limits first)
 *   runner.held(record, request)  the attempt a stored response or batch holds (id, creation time)
 *   attempt.send(exchange)        send and classify the call, not settled yet (the job keeps its
 *                                 record first); a cancel or a stopping worker aborts it (nothing
 *                                 to settle here: the cancel or the restarted job settles)
 *
 * What each background case is charged (one settlement per attempt; the first to apply wins, so a
 * verb that finds the attempt settled already writes and reports nothing):
 *
 *   what happened                                 verb (reason)                outcome: charged
 *   a deferred response's call ended              finish(sent)                 as the runner classified it
 *                                                                              (attempt-runner.ts):
 *                                                                              completed: its cost;
 *                                                                              refused_upstream, not_sent: 0;
 *                                                                              unknown: the reservation
 *   a running response answered, but the object   answerLost(sent)             as finish(sent): its usage
 *     store could not keep the answer                                          (its model not reported)
 *   a batch ended upstream: completed, expired,   finish({ cost, usage })      completed (HTTP 200):
 *     or cancelled while running (partial usage)                               the results' cost
 *   the upstream rejected or failed the batch     refused(code)                refused_upstream: 0
 *   never sent:                                   withdraw(reason)             not_sent: 0
 *     a response's request or record not stored   'request_not_stored'
 *     a queued response cancelled                 'queued_response_cancelled'
 *     a queued response expired                   'queued_response_expired'
 *     the stored request, its connection or all   'target_gone'
 *       eligible target gone when the job runs
 *     a cancel won before a fallback's attempt    'cancelled_before_fallback'
 *       was recorded (the new attempt)
 *     the batch's payload or record not stored    'batch_not_created'
 *     an idempotent replay of a batch creation    'idempotent_replay'
 *     a validating (unsubmitted) batch cancelled  'batch_cancelled_before_submission'
 *     the batch's payload gone at submission      'payload_missing'
 *   sent (or maybe), its cost unknowable:         abandon(reason)              the whole reservation:
 *     a running response cancelled                'response_cancelled_running' cancelled_running
 *     a running response expired (24 h lifetime)  'response_expired_running'   unknown
 *     a response found running when its job is    'response_interrupted'       unknown
 *       claimed again (the process died mid-call)
 *     a batch found with its submission started   'submission_interrupted'     unknown
 *       and no upstream id (died mid-submission)
 *     the submission failed after sending         'submission_failed'          unknown
 *     the results exceed the response ceiling     'results_undeliverable'      unknown
 *     the sweep removing a batch past 7 days      'batch_record_expired'       unknown (a no-op once
 *                                                                              the batch settled)
 *
 * No verb, nothing charged now:
 *   - the object store failing before the send: the job reads the sealed request (payload) before
 *     the record says running, so it throws, the job retries with backoff and the response stays
 *     queued (the batch validating), its attempt held;
 *   - a job crash or lease expiry: the job is claimed again and ends as above (interrupted); an
 *     attempt never settled before its own lease (ATTEMPT_LEASE_MS, BATCH_ATTEMPT_LEASE_MS) is
 *     committed in full as lease_expired by the reaper (ledger.ts);
 *   - a reservation the store failed to confirm: in doubt, released as not_sent once the store
 *     answers (in-doubt.ts); nothing was sent.
 *
 * Each verb's error type (logs and the observer only) is its reason's row in WITHDRAWN / ABANDONED;
 * refused(code) keeps the batch's code. Settlement is retried for one ledger lease; past it, or past
 * the held lease, the reaper commits. The observer hears held() at reservation and settledHeld()
 * from the first settlement to apply, in whichever process.
 */
import type { GatewayError } from '../errors/gateway-error.js';
import type { CancelSignal } from '../lib/cancel-signal.js';
import { isoTime } from '../lib/clock.js';
import type { Settlement, SettlementOutcome } from '../money/settlement.js';
import type { RequestRecord } from '../observability/request-scope.js';
import { type Ledger, stateOf } from './ledger.js';
import type { AnswerSeen, HeldResult, UpstreamExchange } from './upstream-exchange.js';

/** Never sent: released as not_sent, 0 charged; each reason's error type. */
const WITHDRAWN = {
  request_not_stored: 'not_stored',
  queued_response_cancelled: 'cancelled_queued',
  queued_response_expired: 'cancelled_queued',
  target_gone: 'unavailable',
  cancelled_before_fallback: 'cancelled_before_fallback',
  batch_not_created: 'not_created',
  idempotent_replay: 'idempotent_replay',
  batch_cancelled_before_submission: 'cancelled_before_submission',
  payload_missing: 'payload_missing',
} as const;

/** Sent (or maybe sent), its cost unknowable: the whole reservation; each reason's outcome and error type. */
const ABANDONED = {
  response_cancelled_running: { outcome: 'cancelled_running', errorType: 'cancelled' },
  response_expired_running: { outcome: 'unknown', errorType: 'expired' },
  response_interrupted: { outcome: 'unknown', errorType: 'interrupted' },
  submission_interrupted: { outcome: 'unknown', errorType: 'submission_interrupted' },
  submission_failed: { outcome: 'unknown', errorType: 'submission_failed' },
  results_undeliverable: { outcome: 'unknown', errorType: 'results_undeliverable' },
  batch_record_expired: { outcome: 'unknown', errorType: 'batch_record_expired' },
} as const satisfies Record<string, { outcome: SettlementOutcome; errorType: string }>;

export type WithdrawReason = keyof typeof WITHDRAWN;
export type AbandonReason = keyof typeof ABANDONED;

/** A settlement that charges nothing beyond its outcome's rule (0, or the whole reservation). */
function uncosted(outcome: SettlementOutcome, errorType: string): Settlement {
  return { outcome, costMicrosUsd: 0, usage: null, httpStatus: null, errorType };
}

/** A background call sent and classified, settled later with finish (or answerLost); opaque to the job. */
export class SentCall {
  readonly kind = 'sent';
}

/** What each sent call's classification implies: its settlement and the model its answer named. */
interface Ending {
  settlement: Settlement;
  responseModel: string | null;
  /** When its answer arrived and the upstream's request id (the request log's timings and id). */
  seen: AnswerSeen | undefined;
}

const endings = new WeakMap<SentCall, Ending>();

function sentCall(
  settlement: Settlement,
  responseModel: string | null,
  seen: AnswerSeen | undefined,
): SentCall {
  const sent = new SentCall();
  endings.set(sent, { settlement, responseModel, seen });
  return sent;
}

function endingOf(sent: SentCall): Ending {
  const ending = endings.get(sent);
  if (!ending) throw new Error('not a call sent through BackgroundAttempt.send');
  return ending;
}

/** A background call's result: settle it with the attempt's verbs once the job's record says so. */
export type BackgroundCall<Answer> =
  | { kind: 'answered'; answer: Answer; sent: SentCall }
  | {
      kind: 'failed';
      error: GatewayError;
      retryable: boolean;
      /** The failure's low-cardinality class (a fallback's metric), when it has one. */
      errorType: string | null;
      sent: SentCall;
    }
  /** Aborted: a cancel or a stopping worker decides (and settles). */
  | { kind: 'aborted' };

/** How a background attempt ends: one of its verbs, applied once the job's record says so. */
export type BackgroundEnd = (attempt: BackgroundAttempt) => Promise<void>;

/** What a batch's results came to (the upstream's usage, priced). */
export interface BatchResults {
  costMicrosUsd: number;
  usage: Settlement['usage'];
}

/** What the attempt runner lends background attempts: the ledger and its send-and-classify. */
export interface BackgroundLedger {
  ledger: Ledger;
  exchange<Answer>(exchange: UpstreamExchange<Answer>, signal: CancelSignal): Promise<HeldResult<Answer>>;
}

/**
 * An attempt held by a background resource, named by its id and creation time. Its labels (Project,
 * key, Run, endpoint, alias, connection, profile, model) and its reservation are not carried: they
 * are stored with the attempt and read back in the settling transaction for the observer, in
 * whichever process settles it.
 */
export class BackgroundAttempt {
  constructor(
    readonly attemptId: string,
    /** Epoch ms the attempt was reserved (for its duration). */
    private readonly createdAt: number,
    /** The client request the settling call serves (its log line), if any. */
    private readonly request: RequestRecord | undefined,
    private readonly lent: BackgroundLedger,
  ) {}

  /** Sends and classifies the call without settling: the job settles after its own bookkeeping. */
  async send<Answer>(
    exchange: UpstreamExchange<Answer>,
    signal: CancelSignal,
  ): Promise<BackgroundCall<Answer>> {
    const result = await this.lent.exchange(exchange, signal);
    switch (result.kind) {
      case 'aborted':
        return result;
      case 'answered':
        return {
          kind: 'answered',
          answer: result.answer,
          sent: sentCall(result.settlement, result.responseModel, result.seen),
        };
      case 'failed':
        return {
          kind: 'failed',
          error: result.error,
          retryable: result.retryable,
          errorType: result.settlement.errorType,
          sent: sentCall(result.settlement, null, result.seen),
        };
      default: {
        const never: never = result;
        throw new Error(`unknown exchange result ${String(never)}`);
      }
    }
  }

  /** The call (or the batch) ended: charged as it was classified, or at the batch results' cost. */
  async finish(ended: SentCall | BatchResults): Promise<void> {
    if (ended instanceof SentCall) {
      const { settlement, responseModel, seen } = endingOf(ended);
      await this.settle(settlement, responseModel, seen);
      return;
    }
    await this.settle({
      outcome: 'completed',
      costMicrosUsd: ended.costMicrosUsd,
      usage: ended.usage,
      httpStatus: 200,
      errorType: null,
    });
  }

  /** The upstream answered but its answer could not be kept: charged as the call ended (its usage). */
  async answerLost(sent: SentCall): Promise<void> {
    const { settlement, seen } = endingOf(sent);
    await this.settle(settlement, null, seen);
  }

  /** The upstream rejected or failed the batch: refused_upstream, nothing charged. */
  async refused(code: string): Promise<void> {
    await this.settle(uncosted('refused_upstream', code));
  }

  /** Nothing was sent: not_sent, nothing charged. */
  async withdraw(reason: WithdrawReason): Promise<void> {
    await this.settle(uncosted('not_sent', WITHDRAWN[reason]));
  }

  /** Sent (or maybe sent) and its cost unknowable: the whole reservation, with the reason's outcome. */
  async abandon(reason: AbandonReason): Promise<void> {
    const { outcome, errorType } = ABANDONED[reason];
    await this.settle(uncosted(outcome, errorType));
  }

  /** Settles by id; idempotent in the store (the first settlement wins and alone is reported). */
  private async settle(
    settlement: Settlement,
    responseModel: string | null = null,
    seen?: AnswerSeen,
  ): Promise<void> {
    const { ledger } = this.lent;
    const now = ledger.clock.now();
    await ledger.persistHeldSettlement(
      {
        attemptId: this.attemptId,
        state: stateOf(settlement.outcome),
        outcome: settlement.outcome,
        costMicrosUsd: Math.min(settlement.costMicrosUsd, Number.MAX_SAFE_INTEGER),
        usage: settlement.usage,
        httpStatus: settlement.httpStatus,
        durationMs: Math.max(0, now - this.createdAt),
        settledAt: isoTime(now),
        firstByteMs: seen ? Math.max(0, seen.atMs - this.createdAt) : null,
        upstreamRequestId: seen?.upstreamRequestId ?? null,
      },
      now + ledger.settings.leaseMs,
      settlement.errorType,
      this.request,
      responseModel,
    );
  }
}
