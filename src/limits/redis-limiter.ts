/**
 * Token buckets in Redis (optional; configured with rate_limits.kind: redis). One Lua script reads,
 * refills, takes and writes a bucket atomically (a hash with tokens and updated), the transcription
 * of takeFromBucket(); the hash expires once a full refill has passed, so idle buckets cost nothing.
 * While Redis is unreachable the limiter answers from this process's memory (per-replica limits,
 * logged once per outage) instead of refusing or failing requests: budgets never depend on it.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type BucketSize, type Limiter, MemoryLimiter, type TakeResult } from './limiter.js';

const TAKE_SCRIPT = `
local units = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = burst
local updated = now
if stored[1] then
  local elapsed = math.max(0, now - tonumber(stored[2]))
  tokens = math.min(burst, tonumber(stored[1]) + elapsed / 1000 * rate)
  updated = math.max(now, tonumber(stored[2]))
end
local allowed = 0
local wait = 0
if tokens >= units then
  tokens = tokens - units
  allowed = 1
elseif units > burst then
  wait = -1
else
  wait = math.ceil((units - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'updated', string.format('%d', updated))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 60000)
return {allowed, wait}
`;

type RedisWithTake = Redis & {
  svcTakeTokens(
    key: string,
    units: number,
    rate: number,
    burst: number,
    now: number,
  ): Promise<[number, number]>;
};

export interface RedisLimiterOptions {
  url: string;
  keyPrefix: string;
  logger: Logger;
  /** Per-command timeout; past it the take falls back to memory. */
  commandTimeoutMs?: number;
}

export class RedisLimiter implements Limiter {
  private readonly redis: RedisWithTake;
  private readonly fallback = new MemoryLimiter();
  private degraded = false;

  constructor(private readonly options: RedisLimiterOptions) {
    const redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 500,
    });
    redis.on('error', () => {}); // reported by take() when it matters
    redis.defineCommand('svcTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis = redis as RedisWithTake;
  }

  async connect(): Promise<void> {
    await this.redis.connect();
  }

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    try {
      const [allowed, wait] = await this.redis.svcTakeTokens(
        `${this.options.keyPrefix}${bucketKey}`,
        units,
        size.ratePerSecond,
        size.burst,
        Math.floor(nowMs),
      );
      if (this.degraded) this.options.logger.info('redis limiter reachable again: limits are shared');
      this.degraded = false;
      if (allowed === 1) return { allowed: true, waitMs: 0 };
      return { allowed: false, waitMs: wait < 0 ? Number.POSITIVE_INFINITY : wait };
    } catch (error) {
      if (!this.degraded)
        this.options.logger.warn(
          { err: error },
          'redis limiter unreachable: rate limits are per replica until it answers again',
        );
      this.degraded = true;
      return this.fallback.take(bucketKey, units, size, nowMs);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
