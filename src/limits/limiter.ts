/**
 * The limiter port: token buckets shared by every replica. take(bucketKey, units, size) checks and
 * takes `units` tokens in one atomic step and answers allowed, or how long to wait until `units`
 * tokens will be there. A bucket holds at most `burst` tokens and refills at `ratePerSecond`.
 * takeAll() takes from several buckets in one atomic step, all or nothing (the inference limits:
 * inference-limits.ts); adjustAll() gives tokens back or takes more, within [0, burst] (the
 * tokens-per-minute correction at settlement).
 *
 * Adapters: the store (a row per bucket, updated in one transaction: SQLite and PostgreSQL), Redis
 * (one Lua script) when configured, and this process's memory (tests, and the fallback while Redis
 * is unreachable). Times are the caller's clock (epoch ms), so every adapter computes the same
 * answer for the same sequence of calls; bucket keys are opaque (`gov:<project>/<key>` for the
 * governance API, `inf:<key|project>:<id>:<requests|tokens>` for the inference limits).
 */

export interface BucketSize {
  ratePerSecond: number;
  burst: number;
}

export interface TakeResult {
  allowed: boolean;
  /** 0 when allowed; else milliseconds until `units` tokens are available (Infinity if units > burst). */
  waitMs: number;
}

export interface Limiter extends MultiBucketLimiter {
  take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult>;
}

export interface BucketState {
  tokens: number;
  updatedMs: number;
}

/** The one token-bucket rule every adapter applies (the Redis script is its transcription). */
export function takeFromBucket(
  state: BucketState | undefined,
  units: number,
  size: BucketSize,
  nowMs: number,
): { state: BucketState; result: TakeResult } {
  const elapsedMs = state ? Math.max(0, nowMs - state.updatedMs) : 0;
  const available = state
    ? Math.min(size.burst, state.tokens + (elapsedMs / 1000) * size.ratePerSecond)
    : size.burst;
  const updatedMs = state ? Math.max(nowMs, state.updatedMs) : nowMs;
  if (available >= units) {
    return { state: { tokens: available - units, updatedMs }, result: { allowed: true, waitMs: 0 } };
  }
  const waitMs =
    units > size.burst
      ? Number.POSITIVE_INFINITY
      : Math.ceil(((units - available) / size.ratePerSecond) * 1000);
  return { state: { tokens: available, updatedMs }, result: { allowed: false, waitMs } };
}

/** Buckets in this process only (a single replica, tests, the fallback while Redis is away). */
export class MemoryLimiter implements Limiter, MultiBucketLimiter {
  private readonly buckets = new Map<string, BucketState>();

  async takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult> {
    const { states, result } = takeFromBuckets(
      takes.map((take) => this.buckets.get(take.bucketKey)),
      takes,
      nowMs,
    );
    if (this.buckets.size > 100_000) this.buckets.clear();
    for (const [index, take] of takes.entries()) this.buckets.set(take.bucketKey, states[index]!);
    return result;
  }

  async adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void> {
    for (const { bucketKey, units, size } of adjustments)
      this.buckets.set(bucketKey, adjustBucket(this.buckets.get(bucketKey), units, size, nowMs));
  }

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    const { state, result } = takeFromBucket(this.buckets.get(bucketKey), units, size, nowMs);
    if (this.buckets.size > 100_000) this.buckets.clear();
    this.buckets.set(bucketKey, state);
    return result;
  }
}

/** One bucket of an all-or-nothing take (limits/limiter.ts `takeAll`). */
export interface BucketTake {
  bucketKey: string;
  units: number;
  size: BucketSize;
}

/** One bucket's answer to takeAll: whether it had room, and its state after the (maybe not made) take. */
export interface BucketAnswer {
  allowed: boolean;
  /** 0 when this bucket had room; else ms until it will (Infinity if units > burst). */
  waitMs: number;
  /** Whole tokens left after the take (after no take when the whole takeAll was refused). */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  fullInMs: number;
}

export interface MultiTakeResult {
  /** True when every bucket had room and every take was made; false: none was made. */
  allowed: boolean;
  /** One answer per take, in the order given. */
  answers: BucketAnswer[];
}

/**
 * Buckets taken together, all or nothing (the inference limits: a key's and a Project's requests
 * and tokens). Bucket keys must be distinct within one call.
 */
export interface MultiBucketLimiter {
  takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult>;
  /**
   * Per bucket, in one atomic step: gives `units` back (positive: refunds, bounded by the burst) or
   * takes them whatever the bucket holds (negative: a settlement found more than was taken; never
   * below 0 tokens).
   */
  adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void>;
}

function refilled(state: BucketState | undefined, size: BucketSize, nowMs: number): BucketState {
  if (!state) return { tokens: size.burst, updatedMs: nowMs };
  const elapsedMs = Math.max(0, nowMs - state.updatedMs);
  return {
    tokens: Math.min(size.burst, state.tokens + (elapsedMs / 1000) * size.ratePerSecond),
    updatedMs: Math.max(nowMs, state.updatedMs),
  };
}

function answerOf(allowed: boolean, waitMs: number, tokens: number, size: BucketSize): BucketAnswer {
  return {
    allowed,
    waitMs,
    remaining: Math.max(0, Math.floor(tokens)),
    fullInMs: Math.max(0, Math.ceil(((size.burst - tokens) / size.ratePerSecond) * 1000)),
  };
}

/** The all-or-nothing rule every adapter applies: the new states and the answers (takeFromBucket per bucket). */
export function takeFromBuckets(
  states: readonly (BucketState | undefined)[],
  takes: readonly BucketTake[],
  nowMs: number,
): { states: BucketState[]; result: MultiTakeResult } {
  const current = takes.map((take, index) => refilled(states[index], take.size, nowMs));
  const fits = takes.map((take, index) => current[index]!.tokens >= take.units);
  const allowed = fits.every(Boolean);
  const after = current.map((state, index) =>
    allowed ? { tokens: state.tokens - takes[index]!.units, updatedMs: state.updatedMs } : state,
  );
  const answers = takes.map((take, index) => {
    const tokens = after[index]!.tokens;
    if (fits[index]) return answerOf(true, 0, tokens, take.size);
    const waitMs =
      take.units > take.size.burst
        ? Number.POSITIVE_INFINITY
        : Math.ceil(((take.units - tokens) / take.size.ratePerSecond) * 1000);
    return answerOf(false, waitMs, tokens, take.size);
  });
  return { states: after, result: { allowed, answers } };
}

/** The adjust rule: refill, then add `units` (negative: remove), kept within [0, burst]. */
export function adjustBucket(
  state: BucketState | undefined,
  units: number,
  size: BucketSize,
  nowMs: number,
): BucketState {
  const current = refilled(state, size, nowMs);
  return {
    tokens: Math.min(size.burst, Math.max(0, current.tokens + units)),
    updatedMs: current.updatedMs,
  };
}
