/**
 * Inference rate limits: requests per minute and tokens per minute, per Gateway Key and per
 * Project, on the shared limiter (limiter.ts: the store's buckets, or Redis), so every replica
 * takes from the same buckets.
 *
 * - A limit of N per minute is a token bucket of N that refills at N/60 per second (a full
 *   bucket allows a burst of N, then N per minute on average).
 * - Admission (before the ledger's reservation; the attempt runner calls admit()): one atomic
 *   take over every bucket that applies, all or nothing. A request takes 1 request unit (once per
 *   client request: a portable fallback's next attempt takes none) and its worst-case tokens
 *   (input bound + max output tokens: what the ledger prices). Refused: GatewayError rate_limited
 *   naming the limit, with Retry-After; nothing was reserved or sent.
 * - Settlement (ticket.settle): the tokens are corrected to the actual usage (input + cache write
 *   + cache read + output): the difference is given back (a bucket never holds more than its
 *   limit, nor less than 0). An outcome that commits the whole reservation (unknown, lease
 *   expired, cancelled running) keeps the worst case; nothing sent or refused upstream keeps 0.
 *   A ledger refusal after admission gives everything back (ticket.release).
 * - Background attempts (batches, deferred responses) are admitted the same way when they are
 *   created; they are settled later by their job, by which time the bucket has refilled (a bucket
 *   is full again within one minute), so their correction is not made.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../lib/clock.js';
import type { BucketAnswer, BucketSize, BucketTake, MultiBucketLimiter } from './limiter.js';
import {
  type LimitState,
  noteRateLimited,
  type RateLimitedRequest,
  type RateLimitState,
} from './rate-limit-scope.js';

/** Per-minute limits; an absent one does not apply. */
export interface InferenceLimits {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

export type LimitOwner = 'key' | 'project';
export type LimitKind = 'requests' | 'tokens';

/** Who calls and what the call may cost in tokens at most (0 for calls not priced in tokens). */
export interface RateSubject {
  projectId: string;
  keyId: string;
  worstCaseTokens: number;
  /** The client request the attempt serves (its rate scope and log line); absent for background work. */
  request?: RateLimitedRequest | undefined;
}

/** Tokens an attempt settled with (null: none known). */
export interface SettledTokens {
  /** Whether the settlement commits the whole reservation (unknown, cancelled_running, lease_expired). */
  committedWhole: boolean;
  /** input + cache write + cache read + output, when the usage is known. */
  usedTokens: number | null;
}

/** The limits of a caller at this moment. */
export type LimitsSource = (
  projectId: string,
  keyId: string,
) => Promise<{ key: InferenceLimits | undefined; project: InferenceLimits | undefined }>;

interface Bucket {
  owner: LimitOwner;
  kind: LimitKind;
  bucketKey: string;
  size: BucketSize;
  perMinute: number;
}

function sizeOf(perMinute: number): BucketSize {
  return { ratePerSecond: perMinute / 60, burst: perMinute };
}

function bucketsOf(
  projectId: string,
  keyId: string,
  limits: { key: InferenceLimits | undefined; project: InferenceLimits | undefined },
): Bucket[] {
  const buckets: Bucket[] = [];
  const add = (owner: LimitOwner, id: string, own: InferenceLimits | undefined) => {
    if (own?.requestsPerMinute !== undefined)
      buckets.push({
        owner,
        kind: 'requests',
        bucketKey: `inf:${owner}:${id}:requests`,
        size: sizeOf(own.requestsPerMinute),
        perMinute: own.requestsPerMinute,
      });
    if (own?.tokensPerMinute !== undefined)
      buckets.push({
        owner,
        kind: 'tokens',
        bucketKey: `inf:${owner}:${id}:tokens`,
        size: sizeOf(own.tokensPerMinute),
        perMinute: own.tokensPerMinute,
      });
  };
  add('key', keyId, limits.key);
  add('project', projectId, limits.project);
  return buckets;
}

/** Per kind, the binding bucket: a refusing one first, else the one with the fewest tokens left. */
function stateOf(buckets: readonly Bucket[], answers: readonly BucketAnswer[]): RateLimitState {
  const state: RateLimitState = {};
  for (const kind of ['requests', 'tokens'] as const) {
    let chosen: { bucket: Bucket; answer: BucketAnswer } | undefined;
    buckets.forEach((bucket, index) => {
      const answer = answers[index]!;
      if (bucket.kind !== kind) return;
      const better =
        !chosen ||
        (!answer.allowed && chosen.answer.allowed) ||
        (answer.allowed === chosen.answer.allowed && answer.remaining < chosen.answer.remaining);
      if (better) chosen = { bucket, answer };
    });
    if (chosen) {
      const limit: LimitState = {
        limit: chosen.bucket.perMinute,
        remaining: chosen.answer.remaining,
        fullInMs: chosen.answer.fullInMs,
      };
      state[kind] = limit;
    }
  }
  return state;
}

const OWNER_NAMES: Record<LimitOwner, string> = { key: 'Gateway Key', project: 'Project' };

/** The refusal: the refusing bucket that frees last names the limit. */
function refusal(
  buckets: readonly Bucket[],
  answers: readonly BucketAnswer[],
  subject: RateSubject,
): GatewayError {
  let index = answers.findIndex((answer) => !answer.allowed);
  answers.forEach((answer, candidate) => {
    if (!answer.allowed && answer.waitMs > answers[index]!.waitMs) index = candidate;
  });
  const bucket = buckets[index]!;
  const answer = answers[index]!;
  const owner = OWNER_NAMES[bucket.owner];
  const ownerId = bucket.owner === 'key' ? subject.keyId : subject.projectId;
  const never = !Number.isFinite(answer.waitMs);
  const message = never
    ? `Rate limit: this request's worst case of ${subject.worstCaseTokens} tokens (input bound + max output tokens) exceeds the ${owner}'s limit of ${bucket.perMinute} tokens per minute (${ownerId}); it can never be admitted: lower max_tokens or the input.`
    : `Rate limit: the ${owner}'s limit of ${bucket.perMinute} ${bucket.kind} per minute (${ownerId}) is reached; retry after ${Math.ceil(answer.waitMs / 1000)} s.`;
  const retryAfter = never ? 60 : Math.max(1, Math.ceil(answer.waitMs / 1000));
  const scope = subject.request?.rate;
  const refusedBy = `${bucket.owner}_${bucket.kind}` as const;
  if (scope) scope.refusedBy = refusedBy;
  noteRateLimited(subject.request, refusedBy);
  return new GatewayError('rate_limited', message, { retryAfter: String(retryAfter) });
}

/** What admission took, to correct at settlement or give back when the ledger refuses. */
export class RateTicket {
  private done = false;

  constructor(
    private readonly limiter: MultiBucketLimiter,
    private readonly clock: Clock,
    private readonly buckets: readonly Bucket[],
    private readonly requestUnits: number,
    readonly worstCaseTokens: number,
    private readonly onRelease: () => void,
  ) {}

  /** The ledger refused the reservation: gives back the request and its tokens. */
  async release(): Promise<void> {
    if (this.done) return;
    this.done = true;
    this.onRelease();
    await this.give((bucket) => (bucket.kind === 'requests' ? this.requestUnits : this.worstCaseTokens));
  }

  /** The attempt settled: its tokens become the actual usage (never below 0, never above the limit). */
  async settle(tokens: SettledTokens): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (tokens.committedWhole) return;
    const refund = this.worstCaseTokens - (tokens.usedTokens ?? 0);
    if (refund === 0) return;
    await this.give((bucket) => (bucket.kind === 'tokens' ? refund : 0));
  }

  private async give(units: (bucket: Bucket) => number): Promise<void> {
    const adjustments = this.buckets
      .map((bucket) => ({ bucketKey: bucket.bucketKey, units: units(bucket), size: bucket.size }))
      .filter((adjustment) => adjustment.units !== 0);
    if (adjustments.length > 0) await this.limiter.adjustAll(adjustments, this.clock.now());
  }
}

export class InferenceRateLimits {
  constructor(
    private readonly limiter: MultiBucketLimiter,
    private readonly clock: Clock,
    private readonly limitsOf: LimitsSource,
  ) {}

  /**
   * Takes the request and its worst-case tokens from every bucket that applies, or throws
   * GatewayError rate_limited. Resolves undefined when no limit applies to the caller.
   */
  async admit(subject: RateSubject): Promise<RateTicket | undefined> {
    const buckets = bucketsOf(
      subject.projectId,
      subject.keyId,
      await this.limitsOf(subject.projectId, subject.keyId),
    );
    if (buckets.length === 0) return undefined;
    const scope = subject.request?.rate;
    const requestUnits = scope?.requestCounted ? 0 : 1;
    const tokens = Math.max(0, Math.ceil(subject.worstCaseTokens));
    const takes: BucketTake[] = buckets.map((bucket) => ({
      bucketKey: bucket.bucketKey,
      units: bucket.kind === 'requests' ? requestUnits : tokens,
      size: bucket.size,
    }));
    const result = await this.limiter.takeAll(takes, this.clock.now());
    if (scope) scope.state = stateOf(buckets, result.answers);
    if (!result.allowed) throw refusal(buckets, result.answers, subject);
    if (scope) scope.requestCounted = true;
    return new RateTicket(this.limiter, this.clock, buckets, requestUnits, tokens, () => {
      if (!scope) return;
      if (requestUnits === 1) scope.requestCounted = false;
      // The headers tell what is left once the request and its tokens are back.
      const { requests, tokens: tokenState } = scope.state ?? {};
      if (requests) requests.remaining = Math.min(requests.limit, requests.remaining + requestUnits);
      if (tokenState) tokenState.remaining = Math.min(tokenState.limit, tokenState.remaining + tokens);
    });
  }
}
