/**
 * Governance rate limits: a token bucket per (Project, Gateway Key), sized by the Project's
 * configuration, on the shared limiter (limits/limiter.ts): every replica on one store (or one
 * Redis) takes from the same bucket, so N replicas allow the configured rate, not N times it.
 */

import type { Clock } from '../lib/clock.js';
import type { Limiter, BucketSize as LimiterBucketSize } from '../limits/limiter.js';

export interface BucketSize {
  requestsPerSecond: number;
  burst: number;
}

export class RateLimiter {
  constructor(
    private readonly limiter: Limiter,
    private readonly clock: Clock,
  ) {}

  /** Takes one token; resolves 0 when allowed, else the whole seconds to wait before retrying. */
  async take(bucketKey: string, size: BucketSize): Promise<number> {
    const bucket: LimiterBucketSize = { ratePerSecond: size.requestsPerSecond, burst: size.burst };
    const { allowed, waitMs } = await this.limiter.take(`gov:${bucketKey}`, 1, bucket, this.clock.now());
    return allowed ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
  }
}
