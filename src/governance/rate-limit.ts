/**
 * Governance rate limits: a token bucket per (Project, Gateway Key), sized by the Project's
 * configuration. Buckets live in this process: with N replicas the effective limit is N times the
 * configured rate (a rate limit may be approximate; budgets never are, and never live here).
 */
import type { Clock } from '../lib/clock.js';

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export interface BucketSize {
  requestsPerSecond: number;
  burst: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly clock: Clock) {}

  /** Takes one token; returns 0 when allowed, else the whole seconds to wait before retrying. */
  take(bucketKey: string, size: BucketSize): number {
    const now = this.clock.now();
    const bucket = this.buckets.get(bucketKey) ?? { tokens: size.burst, updatedMs: now };
    bucket.tokens = Math.min(
      size.burst,
      bucket.tokens + ((now - bucket.updatedMs) / 1000) * size.requestsPerSecond,
    );
    bucket.updatedMs = now;
    this.buckets.set(bucketKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / size.requestsPerSecond));
  }
}
