/**
 * Picks the limiter the configuration names: the store's buckets (default) or Redis, which falls
 * back to the store's buckets (or refuses: redis_on_unavailable) while it is unreachable.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Limiter } from '../limits/limiter.js';
import type { RedisLimiter } from '../limits/redis-limiter.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Store } from '../store/port.js';

export interface OpenedLimiter {
  limiter: Limiter;
  close(): Promise<void>;
}

export async function openLimiter(
  config: Config,
  environment: NodeJS.ProcessEnv,
  store: Store,
  logger: Logger,
  metrics?: GatewayMetrics,
): Promise<OpenedLimiter> {
  const settings = config.rate_limits;
  switch (settings.kind) {
    case 'store':
      return { limiter: store.rateBuckets, close: async () => undefined };
    case 'redis': {
      const url = environment[settings.redis_url_env];
      if (!url) throw new Error(`rate_limits: environment variable ${settings.redis_url_env} is not set`);
      // Loaded only when configured: Redis is optional.
      const { RedisLimiter } = await import('../limits/redis-limiter.js');
      const redis = new RedisLimiter({
        url,
        keyPrefix: settings.redis_key_prefix,
        logger,
        onUnavailable:
          settings.redis_on_unavailable === 'store' ? { fallback: store.rateBuckets } : 'fail_closed',
        probeIntervalMs: settings.redis_probe_interval_ms,
      });
      // The first connection is awaited (at most the connect timeout), so the first calls do not
      // start an outage episode while it is being made; an unreachable Redis never stops the
      // gateway: the calls then start the episode (redis_on_unavailable).
      await redis
        .connect()
        .catch((error: unknown) => logger.warn({ err: error }, 'redis limiter: first connection failed'));
      if (metrics) observeRedisLimiter(redis, metrics);
      return { limiter: redis, close: () => redis.close() };
    }
    default: {
      const never: never = settings.kind;
      throw new Error(`unknown rate limit store ${String(never)}`);
    }
  }
}

/** The outage episode as metrics, read at scrape time (docs/operations.md "Redis down"). */
function observeRedisLimiter(redis: RedisLimiter, metrics: GatewayMetrics): void {
  const unavailable = metrics.gauge('svc_rate_limits_redis_unavailable');
  const fallback = metrics.counter('svc_rate_limits_redis_fallback_total');
  const counted = { store: 0, refused: 0 };
  metrics.beforeScrape(() => {
    unavailable.set(redis.degraded ? 1 : 0);
    const now = redis.answeredWithoutRedis;
    for (const outcome of ['store', 'refused'] as const) {
      if (now[outcome] > counted[outcome]) fallback.inc({ outcome }, now[outcome] - counted[outcome]);
      counted[outcome] = now[outcome];
    }
  });
}
