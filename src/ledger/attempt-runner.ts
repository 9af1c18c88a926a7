/**
 * The attempt runner: the one home of reserve -> call -> classify -> settle for every upstream
 * call, foreground (messages streamed or not, count_tokens, speech, transcriptions, images,
 * moderations, synchronous responses, batch creation) or background (deferred responses, the batch
 * job, cancels and sweeps). A use case supplies only an UpstreamExchange: how to send the wire call,
 * how to read an error status, and how to read the answer (its cost and usage) or translate its
 * stream. No other code calls the store's reserve, settle or renewLease (test/architecture.test.ts).
 *
 * Settlement table (outcomes: the union in money/settlement.ts, each built by its constructor there;
 * stored in attempts and audit rows):
 *   what happened                                             outcome            committed
 *   failed before a byte was sent: body serialisation,        not_sent           0; 400 (client input) or
 *     signing, a bad URL (NotSentError)                                          500 (our bug); never retried
 *   connect refused (nothing reached the upstream)            not_sent           0; retryable
 *   the upstream answered an error status                     refused_upstream   0 (it billed nothing)
 *   a 2xx answer whose cost is known (usage, count, fee)      completed          the actual cost
 *   timeout or drop after sending, a 2xx answer that cannot   unknown            the whole reservation
 *     be read or carries no cost, the client gone mid-stream,                    (counted in unknown_attempts)
 *     a stream ended without its terminal event
 *   never settled before its lease passed (process died,     lease_expired      the whole reservation
 *     store unreachable for a whole lease): the reaper                           (ledger.ts)
 * Background attempts (deferred responses, batches) are held across processes and settled through
 * intent verbs (withdraw, abandon, finish...); what each background case is charged is the table
 * in background-attempt.ts.
 * Settlement and lease renewals are retried with backoff until the lease would expire (ledger.ts).
 *
 * The AttemptObserver is fed here and in ledger.ts: refused / started at reservation, within()
 * around the call, firstByte() at the answer's headers, settled() once durable; background
 * attempts (hold) report held() at reservation and settledHeld() from whichever process's
 * settlement applies first; routedAway and fallback come from routing through this runner;
 * leaseExpired from the reaper.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { CancelSignal } from '../lib/cancel-signal.js';
import type { InferenceRateLimits, RateTicket } from '../limits/inference-limits.js';
import { Settlement } from '../money/settlement.js';
import type { AttemptObserver, RoutedAwayReason } from '../observability/attempt-observer.js';
import type { RequestRecord } from '../observability/request-scope.js';
import { NotSentError, UpstreamFailure, type UpstreamResponse } from '../primitives/shared/upstream-call.js';
import { BackgroundAttempt, type BackgroundLedger } from './background-attempt.js';
import type { Attempt, AttemptPlan, Ledger } from './ledger.js';
import type { HeldResult, RefusalInfo, StreamReader, UpstreamExchange } from './upstream-exchange.js';

export type {
  HeldResult,
  ReadAnswer,
  RefusalInfo,
  StreamReader,
  UpstreamExchange,
} from './upstream-exchange.js';
export type { AttemptPlan, Settlement };
export { NotSentError };

/** A failed attempt: the client's error, whether another target may be tried, how it settled. */
export interface FailedAttempt {
  ok: false;
  error: GatewayError;
  retryable: boolean;
  outcome: Settlement['outcome'];
  /** The settlement's error detail (for a fallback's metric and span event). */
  errorType: string | null;
}

function failedAttempt(error: GatewayError, retryable: boolean, settlement: Settlement): FailedAttempt {
  return { ok: false, error, retryable, outcome: settlement.outcome, errorType: settlement.errorType };
}

const clientGone = () => new GatewayError('upstream_unavailable', 'The client went away.');

/** A failed attempt joins its request's route: the next attempt's log entry names it as tried. */
function noteTried(plan: AttemptPlan, attemptId: string, failed: FailedAttempt): void {
  plan.request?.routeTried.push({
    attempt_id: attemptId,
    connection: plan.connection,
    outcome: failed.outcome,
    error: failed.errorType ?? failed.error.code,
  });
}

export type CallResult<Answer> = { ok: true; answer: Answer; attemptId: string } | FailedAttempt;

export type StreamResult = { ok: true; frames: AsyncGenerator<string>; attemptId: string } | FailedAttempt;

type Opened =
  | { ok: true; response: UpstreamResponse }
  | { ok: false; error: GatewayError; retryable: boolean; settlement: Settlement }
  | { ok: false; aborted: true };

/**
 * Resolves once the writes made in this turn have left: a response's socket is corked until the
 * next tick (Node's http), and setImmediate runs after every tick and the poll for I/O.
 */
function afterWrites(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A transport failure's client error. */
export function transportError(failure: UpstreamFailure): GatewayError {
  return new GatewayError(
    failure.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable',
    failure.message,
  );
}

function localError(error: NotSentError): GatewayError {
  return error.fault === 'client'
    ? new GatewayError('invalid_request', `The request cannot be sent upstream: ${error.message}`)
    : new GatewayError('internal_error', 'The gateway could not build the upstream request.');
}

function refusalError(info: RefusalInfo): GatewayError {
  return new GatewayError('upstream_error', info.message, {
    status: info.status,
    ...(info.type !== undefined ? { type: info.type } : {}),
    ...(info.retryAfter !== undefined ? { retryAfter: info.retryAfter } : {}),
  });
}

/**
 * A 2xx answer the gateway cannot translate (its body, or a stream's translator): not retried, since
 * the upstream answered and may bill, and settled as unknown. A GatewayError the translation raised
 * is the client's error as it stands.
 */
function untranslatable(
  error: unknown,
  response: UpstreamResponse,
  what: 'answer' | 'stream',
): { error: GatewayError; settlement: Settlement } {
  return {
    error:
      error instanceof GatewayError
        ? error
        : new GatewayError(
            'upstream_error',
            `The upstream ${what} could not be translated: ${(error as Error).message}`,
          ),
    settlement: Settlement.unknown('protocol', response.status),
  };
}

async function readErrorBody(response: UpstreamResponse): Promise<unknown> {
  let text: string;
  try {
    text = await response.body.text();
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class AttemptRunner {
  readonly observer: AttemptObserver;
  /** Streamed attempts still open: one timer renews their leases (not one interval per stream). */
  private readonly streaming = new Set<Attempt>();
  private renewal: NodeJS.Timeout | undefined;
  /** What background attempts use of this runner: the ledger and the send-and-classify. */
  private readonly lent: BackgroundLedger;

  constructor(
    private readonly ledger: Ledger,
    private readonly rateLimits?: InferenceRateLimits,
  ) {
    this.observer = ledger.observer;
    this.lent = { ledger, exchange: (exchange, signal) => this.exchangeHeld(exchange, signal) };
  }

  /** The inference rate limits, then the ledger's reservation; a refusal by either reserves nothing. */
  private async reserve(
    plan: AttemptPlan,
    durable?: { resourceId: string; leaseMs: number },
  ): Promise<Attempt> {
    let ticket: RateTicket | undefined;
    try {
      ticket = await this.rateLimits?.admit({
        projectId: plan.projectId,
        keyId: plan.keyId,
        worstCaseTokens: plan.worstCaseTokens ?? 0,
        request: plan.request,
      });
    } catch (error) {
      const code = error instanceof GatewayError ? error.code : undefined;
      this.observer.refused(
        plan,
        code === 'rate_limited' || code === 'rate_limits_unavailable' ? code : 'store_unavailable',
      );
      throw error;
    }
    try {
      return await this.ledger.reserve(plan, durable, durable ? undefined : ticket);
    } catch (error) {
      await ticket?.release().catch(() => undefined);
      throw error;
    }
  }

  /** Routing skipped a target before any attempt (portable mode); `request`: the client request's record. */
  routedAway(
    alias: string,
    connection: string,
    reason: RoutedAwayReason,
    request?: RequestRecord,
    reasons: string[] = [],
  ): void {
    request?.routeSkipped.push({ connection, code: reason, reasons });
    this.observer.routedAway(alias, connection, reason, request);
  }

  /** Routing moves on from a failed attempt to the next target; `request`: the client request's record. */
  fallback(
    alias: string,
    fromConnection: string,
    toConnection: string,
    errorType: string,
    request?: RequestRecord,
  ): void {
    this.observer.fallback(alias, fromConnection, toConnection, errorType, request);
  }

  /** reserve -> send -> classify -> read -> settle, for a call answered in one piece. */
  async call<Answer>(
    plan: AttemptPlan,
    exchange: UpstreamExchange<Answer>,
    signal?: CancelSignal,
  ): Promise<CallResult<Answer>> {
    const attempt = await this.reserve(plan);
    const result = await this.callReserved(attempt, exchange, signal);
    if (!result.ok) noteTried(plan, attempt.id, result);
    return result;
  }

  private async callReserved<Answer>(
    attempt: Attempt,
    exchange: UpstreamExchange<Answer>,
    signal?: CancelSignal,
  ): Promise<CallResult<Answer>> {
    const opened = await this.open(attempt, exchange, signal);
    if (!opened.ok) {
      if ('aborted' in opened) {
        const settlement = Settlement.unknown('client_gone');
        await attempt.settle(settlement);
        return failedAttempt(clientGone(), false, settlement);
      }
      await attempt.settle(opened.settlement);
      return failedAttempt(opened.error, opened.retryable, opened.settlement);
    }
    const read = await this.read(exchange, opened.response);
    await attempt.settle(read.settlement, read.kind === 'answered' ? (read.responseModel ?? null) : null);
    if (read.kind === 'failed') return failedAttempt(read.error, read.retryable, read.settlement);
    return { ok: true, answer: read.answer, attemptId: attempt.id };
  }

  /** reserve -> send -> classify; a 2xx answer streams through the exchange's reader and settles when it ends. */
  async callStreamed(
    plan: AttemptPlan,
    exchange: UpstreamExchange<unknown>,
    clientSignal: CancelSignal,
  ): Promise<StreamResult> {
    const attempt = await this.reserve(plan);
    const result = await this.openStream(attempt, exchange, clientSignal);
    if (!result.ok) noteTried(plan, attempt.id, result);
    return result;
  }

  private async openStream(
    attempt: Attempt,
    exchange: UpstreamExchange<unknown>,
    clientSignal: CancelSignal,
  ): Promise<StreamResult> {
    // The client's signal is the upstream call's: the client going away aborts the call, before
    // the answer or while its body streams. The stream's own early end destroys the body (pipe).
    const opened = await this.open(attempt, exchange, clientSignal);
    if (!opened.ok) {
      const settlement = 'aborted' in opened ? Settlement.unknown('client_gone') : opened.settlement;
      await attempt.settle(settlement);
      if ('aborted' in opened) return failedAttempt(clientGone(), false, settlement);
      return failedAttempt(opened.error, opened.retryable, settlement);
    }
    let reader: StreamReader;
    try {
      reader = exchange.stream!(opened.response);
    } catch (error) {
      opened.response.body.destroy();
      const failed = untranslatable(error, opened.response, 'stream');
      await attempt.settle(failed.settlement);
      return failedAttempt(failed.error, false, failed.settlement);
    }
    return {
      ok: true,
      attemptId: attempt.id,
      frames: this.pipe(attempt, opened.response, reader, clientSignal),
    };
  }

  /**
   * Reserves an attempt held by a background resource (owned by `job:<resourceId>`, so a restart
   * does not reap it); its verbs (background-attempt.ts) settle it from whichever process ends it.
   */
  async hold(plan: AttemptPlan, resourceId: string, leaseMs: number): Promise<BackgroundAttempt> {
    const attempt = await this.reserve(plan, { resourceId, leaseMs });
    return new BackgroundAttempt(attempt.id, attempt.startedMs, plan.request, this.lent);
  }

  /**
   * The attempt a stored background resource holds (its record keeps the attempt id and creation
   * time); `request`: the client request that ends it, if any (its log line).
   */
  held(record: { attemptId: string; createdAt: number }, request?: RequestRecord): BackgroundAttempt {
    return new BackgroundAttempt(record.attemptId, record.createdAt, request, this.lent);
  }

  /** Sends and classifies a background call without settling: its job settles after its own bookkeeping. */
  private async exchangeHeld<Answer>(
    exchange: UpstreamExchange<Answer>,
    signal: CancelSignal,
  ): Promise<HeldResult<Answer>> {
    const opened = await this.send(exchange, signal, undefined);
    if (!opened.ok) {
      if ('aborted' in opened) return { kind: 'aborted' };
      return {
        kind: 'failed',
        error: opened.error,
        settlement: opened.settlement,
        retryable: opened.retryable,
      };
    }
    const read = await this.read(exchange, opened.response);
    if (read.kind === 'failed') {
      if (read.aborted) return { kind: 'aborted' };
      return { kind: 'failed', error: read.error, settlement: read.settlement, retryable: read.retryable };
    }
    return {
      kind: 'answered',
      answer: read.answer,
      settlement: read.settlement,
      responseModel: read.responseModel ?? null,
    };
  }

  private open(
    attempt: Attempt,
    exchange: UpstreamExchange<unknown>,
    signal: CancelSignal | undefined,
  ): Promise<Opened> {
    return this.send(exchange, signal, attempt);
  }

  /** Sends and classifies everything up to a 2xx answer (whose body is not read yet). */
  private async send(
    exchange: UpstreamExchange<unknown>,
    signal: CancelSignal | undefined,
    attempt: Attempt | undefined,
  ): Promise<Opened> {
    let response: UpstreamResponse;
    try {
      response = await (attempt ? attempt.within(() => exchange.send(signal)) : exchange.send(signal));
    } catch (error) {
      if (error instanceof NotSentError)
        return {
          ok: false,
          error: localError(error),
          retryable: false,
          settlement: Settlement.notSent(`local_${error.fault}`),
        };
      if (!(error instanceof UpstreamFailure)) {
        // Thrown before the request left (an undici argument check, a bug in a builder): nothing was sent.
        return {
          ok: false,
          error: localError(new NotSentError('gateway', String(error))),
          retryable: false,
          settlement: Settlement.notSent('local_gateway'),
        };
      }
      if (error.kind === 'aborted') return { ok: false, aborted: true };
      return {
        ok: false,
        error: transportError(error),
        retryable: true,
        settlement:
          error.kind === 'connect' ? Settlement.notSent(error.kind) : Settlement.unknown(error.kind),
      };
    }
    attempt?.firstByte(response.headers);
    if (response.status >= 200 && response.status < 300) return { ok: true, response };
    const info = exchange.refusal(response.status, await readErrorBody(response), response.headers);
    return {
      ok: false,
      error: refusalError(info),
      retryable: info.retryable,
      settlement: Settlement.refusedUpstream(
        response.status,
        response.status >= 500 ? 'http_5xx' : `http_${response.status}`,
      ),
    };
  }

  private async read<Answer>(
    exchange: UpstreamExchange<Answer>,
    response: UpstreamResponse,
  ): Promise<
    | { kind: 'answered'; answer: Answer; settlement: Settlement; responseModel?: string | null | undefined }
    | { kind: 'failed'; error: GatewayError; retryable: boolean; settlement: Settlement; aborted: boolean }
  > {
    try {
      const read = await exchange.read(response);
      const settlement =
        read.costMicrosUsd === null
          ? Settlement.unknown('no_cost', response.status, read.usage)
          : Settlement.completed(read.costMicrosUsd, read.usage, response.status);
      return { kind: 'answered', answer: read.answer, settlement, responseModel: read.responseModel };
    } catch (error) {
      if (error instanceof UpstreamFailure) {
        return {
          kind: 'failed',
          error: transportError(error),
          retryable: error.kind !== 'aborted',
          settlement: Settlement.unknown(error.kind, response.status),
          aborted: error.kind === 'aborted',
        };
      }
      const failed = untranslatable(error, response, 'answer');
      return { kind: 'failed', ...failed, retryable: false, aborted: false };
    }
  }

  /** Renews the leases of the open streamed attempts every third of a lease (at least every second). */
  private holdLease(attempt: Attempt): void {
    this.streaming.add(attempt);
    if (this.renewal !== undefined) return;
    this.renewal = setInterval(
      () => {
        // Stops once no stream is open; the next stream starts it again.
        if (this.streaming.size === 0) {
          clearInterval(this.renewal);
          this.renewal = undefined;
        }
        for (const open of this.streaming) void open.renewLease();
      },
      Math.max(1000, Math.floor(this.ledger.settings.leaseMs / 3)),
    );
    this.renewal.unref();
  }

  /**
   * Pipes translated text to the client; settles exactly once however the stream ends.
   *
   * The last text (from the chunk that finished the stream, and whatever the end adds) waits for the
   * settlement while the process serves other calls, and is the generator's last value: the client
   * writer then writes it and ends the response in the same turn, so the socket sends both in one
   * write instead of two. Under load that write is about a tenth of a short stream's CPU; the text
   * waits for the group commit its settlement joins. A call served alone writes its text at once,
   * and its settlement waits a turn for that text to leave: Node corks a response's socket until
   * the next tick, so a settlement committed in the same turn (at once, when alone) would hold the
   * first bytes of a stream that arrived in one read behind its own commit (docs/performance.md,
   * "The stream path").
   */
  private async *pipe(
    attempt: Attempt,
    response: UpstreamResponse,
    reader: StreamReader,
    clientSignal: CancelSignal,
  ): AsyncGenerator<string> {
    let complete = false;
    // Whether the upstream body ended or failed; false in `finally` means the consumer stopped early.
    let upstreamEnded = false;
    let clientGone = false;
    let protocol = false;
    // The last text, held for the settlement; holding starts when the reader finishes among other calls.
    let last = '';
    let holding = false;
    this.holdLease(attempt);
    try {
      for await (const chunk of response.body) {
        const text = reader.push(chunk as Buffer);
        holding ||= reader.finished() && this.ledger.openAttempts > 1;
        if (holding) last += text;
        else if (text) yield text;
      }
      upstreamEnded = true;
      const ending = reader.end();
      complete = ending.complete;
      const text = complete ? ending.text : ending.text + reader.interrupted(undefined);
      holding ||= this.ledger.openAttempts > 1;
      if (holding) last += text;
      else if (text) yield text;
    } catch (error) {
      upstreamEnded = true;
      // Only the client's departure aborts the upstream request before `finally`.
      clientGone = clientSignal.aborted;
      protocol = !(error instanceof UpstreamFailure);
      const text = clientGone ? '' : last + reader.interrupted(error);
      last = '';
      if (text) yield text;
    } finally {
      this.streaming.delete(attempt);
      if (!upstreamEnded) clientGone = true;
      // A call that finished alone: what it yielded leaves before the settlement commits.
      if (!holding && !clientGone) await afterWrites();
      const usage = reader.usage();
      const model = reader.responseModel?.() ?? null;
      if (complete && usage) {
        await attempt.settle(Settlement.completed(reader.cost(usage), usage, 200), model);
      } else {
        if (!complete) response.body.destroy();
        await attempt.settle(
          Settlement.unknown(
            clientGone ? 'client_gone' : protocol ? 'protocol' : 'stream_incomplete',
            200,
            usage,
          ),
          model,
        );
      }
    }
    if (last) yield last;
  }
}
