/**
 * Token buckets in Redis (optional; configured with rate_limits.kind: redis). One Lua script reads,
 * refills, takes and writes a bucket atomically (a hash with tokens and updated), the transcription
 * of takeFromBucket(); the hash expires once a full refill has passed, so idle buckets cost nothing.
 *
 * While Redis is unreachable (rate_limits.redis_on_unavailable): `store` (the default) takes from
 * the store's buckets instead (shared by every replica on the store, exact as the store is), or
 * `fail_closed` refuses every call a limit applies to with 503 rate_limits_unavailable and
 * Retry-After. Budgets never depend on Redis. An outage episode is logged when it starts and when
 * it ends (how long, how many calls it answered elsewhere or refused); see docs/operations.md for
 * what a switch between the two bucket sets can over-admit.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/gateway-error.js';
import type {
  BucketAnswer,
  BucketSize,
  BucketTake,
  Limiter,
  MultiTakeResult,
  TakeResult,
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

/** What the limits do while Redis is unreachable: take from another limiter (the store's buckets), or refuse. */
export type RedisUnavailable = { fallback: Limiter } | 'fail_closed';

export interface RedisLimiterOptions {
  url: string;
  keyPrefix: string;
  logger: Logger;
  /** Per-command timeout; past it Redis counts as unreachable. */
  commandTimeoutMs?: number;
  onUnavailable: RedisUnavailable;
  /** While unreachable, how often (on average; jittered +-50 %) one PING checks whether Redis is back. */
  probeIntervalMs?: number;
}

/** The error fail-closed limits answer while Redis is unreachable (503 with Retry-After, in the endpoint's dialect). */
function limitsUnavailable(retryAfterMs: number): GatewayError {
  return new GatewayError(
    'rate_limits_unavailable',
    'The rate-limit service cannot be reached and this gateway is configured to refuse calls while it is down; nothing was reserved or sent. Retry later.',
    { retryAfter: String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  );
}

/**
 * An outage episode: from the first failed command to the first answered probe. While it lasts no
 * command goes to Redis (each call would otherwise wait for its own failure): every take and
 * adjustment goes to the fallback, and one PING per probe interval (jittered, so replicas do not
 * probe in step) decides when Redis takes over again.
 */
interface Episode {
  startedMs: number;
  answeredByFallback: number;
  refused: number;
  probe: NodeJS.Timeout | undefined;
}

export class RedisLimiter implements Limiter {
  private readonly redis: RedisWithTake;
  private episode: Episode | undefined;
  private closed = false;
  /** Operations answered without Redis since this process started (the metrics read them). */
  private readonly withoutRedis = { store: 0, refused: 0 };
  private readonly probeIntervalMs: number;

  constructor(private readonly options: RedisLimiterOptions) {
    const redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 500,
      // A black-holed Redis holds a connection attempt (at start-up, or a reconnect) this long at most.
      connectTimeout: 2000,
    });
    redis.on('error', () => {}); // reported once per outage episode
    redis.defineCommand('svcTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('svcTakeAll', { lua: TAKE_ALL_SCRIPT });
    redis.defineCommand('svcAdjustAll', { lua: ADJUST_ALL_SCRIPT });
    this.redis = redis as RedisWithTake;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
  }

  async connect(): Promise<void> {
    await this.redis.connect();
  }

  /** Whether the limits are answered elsewhere (or refused) because Redis is unreachable. */
  get degraded(): boolean {
    return this.episode !== undefined;
  }

  /** Operations answered without Redis since start: from the fallback (`store`) or `refused`. */
  get answeredWithoutRedis(): Readonly<{ store: number; refused: number }> {
    return this.withoutRedis;
  }

  take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    return this.routed(
      async () => {
        const [allowed, wait] = await this.redis.svcTakeTokens(
          `${this.options.keyPrefix}${bucketKey}`,
          units,
          size.ratePerSecond,
          size.burst,
          Math.floor(nowMs),
        );
        if (allowed === 1) return { allowed: true, waitMs: 0 };
        return { allowed: false, waitMs: wait < 0 ? Number.POSITIVE_INFINITY : wait };
      },
      (fallback) => fallback.take(bucketKey, units, size, nowMs),
    );
  }

  takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult> {
    return this.routed(
      async () => {
        const args: (string | number)[] = takes.map((take) => `${this.options.keyPrefix}${take.bucketKey}`);
        args.push(Math.floor(nowMs));
        for (const take of takes) args.push(take.units, take.size.ratePerSecond, take.size.burst);
        const reply = await this.redis.svcTakeAll(takes.length, ...args);
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
      },
      (fallback) => fallback.takeAll(takes, nowMs),
    );
  }

  async adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void> {
    try {
      await this.routed(
        async () => {
          const args: (string | number)[] = adjustments.map(
            (adjustment) => `${this.options.keyPrefix}${adjustment.bucketKey}`,
          );
          args.push(Math.floor(nowMs));
          for (const adjustment of adjustments)
            args.push(adjustment.units, adjustment.size.ratePerSecond, adjustment.size.burst);
          await this.redis.svcAdjustAll(adjustments.length, ...args);
        },
        (fallback) => fallback.adjustAll(adjustments, nowMs),
      );
    } catch (error) {
      // Fail-closed: a correction nobody can record is dropped (the bucket was in Redis).
      if (!(error instanceof GatewayError)) throw error;
    }
  }

  /** Redis when it answers; else the fallback, or the fail-closed refusal. */
  private async routed<T>(
    inRedis: () => Promise<T>,
    elsewhere: (fallback: Limiter) => Promise<T>,
  ): Promise<T> {
    if (!this.episode) {
      try {
        return await inRedis();
      } catch (error) {
        this.unreachable(error);
      }
    }
    const episode = this.episode!;
    const onUnavailable = this.options.onUnavailable;
    if (onUnavailable === 'fail_closed') {
      episode.refused += 1;
      this.withoutRedis.refused += 1;
      throw limitsUnavailable(this.probeIntervalMs);
    }
    episode.answeredByFallback += 1;
    this.withoutRedis.store += 1;
    return elsewhere(onUnavailable.fallback);
  }

  private unreachable(error: unknown): void {
    if (this.episode) return;
    this.episode = { startedMs: Date.now(), answeredByFallback: 0, refused: 0, probe: undefined };
    const mode = this.options.onUnavailable === 'fail_closed' ? 'fail_closed' : 'store';
    this.options.logger.warn(
      { err: error, event: 'rate_limits_redis_unavailable', on_unavailable: mode },
      mode === 'store'
        ? "redis limiter unreachable: rate limits use the store's buckets until it answers again"
        : 'redis limiter unreachable: calls under a rate limit are refused (503) until it answers again',
    );
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    const episode = this.episode;
    if (!episode || this.closed) return;
    const delay = this.probeIntervalMs * (0.5 + Math.random());
    episode.probe = setTimeout(() => void this.probe(episode), delay);
    episode.probe.unref();
  }

  private async probe(episode: Episode): Promise<void> {
    try {
      await this.redis.ping();
    } catch {
      this.scheduleProbe();
      return;
    }
    if (this.episode !== episode) return;
    this.episode = undefined;
    this.options.logger.info(
      {
        event: 'rate_limits_redis_reachable',
        outage_ms: Date.now() - episode.startedMs,
        answered_by_fallback: episode.answeredByFallback,
        refused: episode.refused,
      },
      'redis limiter reachable again: rate limits are in Redis',
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.episode?.probe) clearTimeout(this.episode.probe);
    this.redis.disconnect();
  }
}
