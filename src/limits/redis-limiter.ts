/**
 * Token buckets in Redis (optional; configured with rate_limits.kind: redis). One Lua script reads,
 * refills, takes and writes a bucket atomically (a hash with tokens and updated), the transcription
 * of takeFromBucket(); the hash expires once a full refill has passed, so idle buckets cost nothing.
 * While Redis is unreachable the limiter answers from this process's memory (per-replica limits,
 * logged once per outage) instead of refusing or failing requests: budgets never depend on it.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  type BucketAnswer,
  type BucketSize,
  type BucketTake,
  type Limiter,
  MemoryLimiter,
  type MultiTakeResult,
  type TakeResult,
} from './limiter.js';

/**
 * The bucket at \`now\`, in Lua, shared by every script: a key with no state is full; otherwise its
 * tokens refill at \`rate\` per second since it was last written, up to \`burst\`.
 */
const REFILL_LUA = `
local function refill(key, now, rate, burst)
  local stored = redis.call('HMGET', key, 'tokens', 'updated')
  if not stored[1] then return burst, now end
  local elapsed = math.max(0, now - tonumber(stored[2]))
  return math.min(burst, tonumber(stored[1]) + elapsed / 1000 * rate), math.max(now, tonumber(stored[2]))
end
`;

const TAKE_SCRIPT = `${REFILL_LUA}
local units = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local tokens, updated = refill(KEYS[1], now, rate, burst)
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

/**
 * takeFromBuckets() in Lua: KEYS are the buckets; ARGV is now, then (units, rate, burst) per key.
 * Answers allowed, then (allowed, wait, remaining, fullIn) per key (wait -1 = never).
 */
const TAKE_ALL_SCRIPT = `${REFILL_LUA}
local now = tonumber(ARGV[1])
local states = {}
local all = 1
for i, key in ipairs(KEYS) do
  local units = tonumber(ARGV[3 * i - 1])
  local rate = tonumber(ARGV[3 * i])
  local burst = tonumber(ARGV[3 * i + 1])
  local tokens, updated = refill(key, now, rate, burst)
  states[i] = {units, rate, burst, tokens, updated}
  if tokens < units then all = 0 end
end
local reply = {all}
for i, key in ipairs(KEYS) do
  local s = states[i]
  local units, rate, burst, tokens, updated = s[1], s[2], s[3], s[4], s[5]
  local fits = tokens >= units
  local wait = 0
  if all == 1 then tokens = tokens - units end
  if not fits then
    if units > burst then wait = -1 else wait = math.ceil((units - tokens) / rate * 1000) end
  end
  redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'updated', string.format('%d', updated))
  redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 60000)
  local ok = 0
  if fits then ok = 1 end
  table.insert(reply, ok)
  table.insert(reply, wait)
  table.insert(reply, math.max(0, math.floor(tokens)))
  table.insert(reply, math.max(0, math.ceil((burst - tokens) / rate * 1000)))
end
return reply
`;

/** adjustBucket() in Lua, per key: ARGV is now, then (units, rate, burst) per key (units < 0: remove). */
const ADJUST_ALL_SCRIPT = `${REFILL_LUA}
local now = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local units = tonumber(ARGV[3 * i - 1])
  local rate = tonumber(ARGV[3 * i])
  local burst = tonumber(ARGV[3 * i + 1])
  local tokens, updated = refill(key, now, rate, burst)
  tokens = math.min(burst, math.max(0, tokens + units))
  redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'updated', string.format('%d', updated))
  redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 60000)
end
return 1
`;

type RedisWithTake = Redis & {
  svcTakeAll(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
  svcAdjustAll(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
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
    redis.defineCommand('svcTakeAll', { lua: TAKE_ALL_SCRIPT });
    redis.defineCommand('svcAdjustAll', { lua: ADJUST_ALL_SCRIPT });
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
      this.reachable();
      if (allowed === 1) return { allowed: true, waitMs: 0 };
      return { allowed: false, waitMs: wait < 0 ? Number.POSITIVE_INFINITY : wait };
    } catch (error) {
      this.unreachable(error);
      return this.fallback.take(bucketKey, units, size, nowMs);
    }
  }

  async takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult> {
    try {
      const args: (string | number)[] = takes.map((take) => `${this.options.keyPrefix}${take.bucketKey}`);
      args.push(Math.floor(nowMs));
      for (const take of takes) args.push(take.units, take.size.ratePerSecond, take.size.burst);
      const reply = await this.redis.svcTakeAll(takes.length, ...args);
      this.reachable();
      const answers: BucketAnswer[] = takes.map((_, index) => {
        const wait = Number(reply[2 + index * 4]);
        return {
          allowed: Number(reply[1 + index * 4]) === 1,
          waitMs: wait < 0 ? Number.POSITIVE_INFINITY : wait,
          remaining: Number(reply[3 + index * 4]),
          fullInMs: Number(reply[4 + index * 4]),
        };
      });
      return { allowed: Number(reply[0]) === 1, answers };
    } catch (error) {
      this.unreachable(error);
      return this.fallback.takeAll(takes, nowMs);
    }
  }

  async adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void> {
    try {
      const args: (string | number)[] = adjustments.map(
        (adjustment) => `${this.options.keyPrefix}${adjustment.bucketKey}`,
      );
      args.push(Math.floor(nowMs));
      for (const adjustment of adjustments)
        args.push(adjustment.units, adjustment.size.ratePerSecond, adjustment.size.burst);
      await this.redis.svcAdjustAll(adjustments.length, ...args);
      this.reachable();
    } catch (error) {
      this.unreachable(error);
      await this.fallback.adjustAll(adjustments, nowMs);
    }
  }

  private reachable(): void {
    if (this.degraded) this.options.logger.info('redis limiter reachable again: limits are shared');
    this.degraded = false;
  }

  private unreachable(error: unknown): void {
    if (!this.degraded)
      this.options.logger.warn(
        { err: error },
        'redis limiter unreachable: rate limits are per replica until it answers again',
      );
    this.degraded = true;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
