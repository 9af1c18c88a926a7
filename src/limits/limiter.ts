/**
 * The limiter port: token buckets shared by every replica. take(bucketKey, units, size) checks and
 * takes `units` tokens in one atomic step and answers allowed, or how long to wait until `units`
 * tokens will be there. A bucket holds at most `burst` tokens and refills at `ratePerSecond`.
 *
 * Adapters: the store (a row per bucket, updated in one transaction: SQLite and PostgreSQL), Redis
 * (one Lua script) when configured, and this process's memory (tests, and the fallback while Redis
 * is unreachable). Times are the caller's clock (epoch ms), so every adapter computes the same
 * answer for the same sequence of calls; bucket keys are opaque (`gov:<project>/<key>` today, and
 * issue 13's per-key and per-Project inference limits use their own prefixes).
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

export interface Limiter {
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
export class MemoryLimiter implements Limiter {
  private readonly buckets = new Map<string, BucketState>();

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    const { state, result } = takeFromBucket(this.buckets.get(bucketKey), units, size, nowMs);
    if (this.buckets.size > 100_000) this.buckets.clear();
    this.buckets.set(bucketKey, state);
    return result;
  }
}
