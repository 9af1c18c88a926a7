/**
 * Redis, which holds the rate limits, dies and comes back (issue 38 item 5). A redis-server of this
 * test's own on a free port; three gateways on one PostgreSQL database: two with
 * rate_limits.redis_on_unavailable `store` (the default), one with `fail_closed`. prj_b allows 10
 * requests per minute.
 *
 * - Redis up: the replicas take from Redis.
 * - Redis killed: the two `store` replicas take from the store's buckets, shared: together they admit
 *   the limit once (plus the refill while the test runs), not once each and not from memory; the
 *   `fail_closed` one answers 503 rate_limits_unavailable with Retry-After in the endpoint's dialect
 *   (vendora for /v1/messages, svc for the governance API); calls no limit applies to still pass.
 * - Redis restarted: each replica's probe finds it and the limits are in Redis again.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import type { GatewayMetrics } from '../../src/observability/metrics.js';
import { createObservability } from '../../src/observability/observability.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { openLimiter } from '../../src/startup/open-limiter.js';
import { messages, rateLimitedConfig } from '../governance/rate-limit-support.js';
import { eventually } from '../support/deferred-gateway.js';
import { baseConfig, call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { freePort } from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { describeOwnRedis, type OwnRedis, startOwnRedis } from '../support/redis.js';

const LIMIT = 10;
const PREFIX = 'svc-outage:';
const SECRET = newKeySecret();
const KEY_ID = 'key_outage';
const PROBE_MS = 200;

/** Requests the bucket may refill while `elapsedMs` pass (LIMIT per minute), rounded up. */
const refill = (elapsedMs: number) => Math.ceil((elapsedMs / 60_000) * LIMIT);

describeOwnRedis('rate limits while Redis is down', () => {
  describePostgres('two store-fallback replicas and a fail-closed one on one PostgreSQL database', () => {
    let database: TestDatabase;
    let sim: Simulator;
    let redis: OwnRedis;
    let inspect: Redis;
    let replicas: TestGateway[];
    let closed: TestGateway;
    const metricsOf = new Map<TestGateway, GatewayMetrics>();

    const burst = async (gateways: TestGateway[], count: number) => {
      const results = await Promise.all(
        Array.from({ length: count }, (_, index) => messages(gateways[index % gateways.length]!.url, SECRET)),
      );
      const statuses = results.map((result) => result.status);
      for (const status of statuses) expect([200, 429]).toContain(status);
      return { admitted: statuses.filter((status) => status === 200).length, results };
    };
    /** The replica's Redis outage series, read from its registry (what /metrics exposes). */
    const outageSeries = async (gateway: TestGateway) => {
      const text = await metricsOf.get(gateway)!.exposition();
      const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
      return {
        unavailable: value(/^svc_rate_limits_redis_unavailable (\S+)$/m),
        store: value(/^svc_rate_limits_redis_fallback_total\{outcome="store"\} (\S+)$/m),
        refused: value(/^svc_rate_limits_redis_fallback_total\{outcome="refused"\} (\S+)$/m),
      };
    };
    const linesOf = (gateway: TestGateway, event: string) =>
      gateway.logs.filter((line) => line.includes(`"event":"${event}"`));

    /** A gateway on the shared database and this test's Redis. */
    const start = async (onUnavailable: 'store' | 'fail_closed') => {
      const observability = createObservability({ metrics: true, tracing: false });
      const gateway = await startTestGateway({
        observability,
        store: 'postgres',
        databaseUrl: database.url,
        environment: {
          SIM_UPSTREAM_KEY: 'sk-simulated-upstream',
          OUTAGE_REDIS_URL: redis.url,
          OUTAGE_KEY: SECRET,
        },
        config: {
          ...rateLimitedConfig(sim.url, { requests_per_minute: LIMIT }),
          keys: [
            { id: KEY_ID, project: 'prj_b', scopes: ['inference', 'run:create'], secret_env: 'OUTAGE_KEY' },
          ],
          rate_limits: {
            kind: 'redis',
            redis_url_env: 'OUTAGE_REDIS_URL',
            redis_key_prefix: PREFIX,
            redis_on_unavailable: onUnavailable,
            redis_probe_interval_ms: PROBE_MS,
          },
        },
      });
      metricsOf.set(gateway, observability.metrics!);
      return gateway;
    };

    beforeAll(async () => {
      [database, sim] = await Promise.all([createTestDatabase(), startSimulator()]);
      redis = await startOwnRedis(await freePort());
      inspect = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      inspect.on('error', () => undefined);
      // One at a time: the first applies the migrations.
      replicas = [await start('store'), await start('store')];
      closed = await start('fail_closed');
    }, 60_000);
    afterAll(async () => {
      for (const gateway of [...(replicas ?? []), closed]) await gateway?.close();
      inspect?.disconnect();
      await redis?.stop();
      await sim?.close();
      await database?.drop();
    });

    it('a fail-closed limiter just opened takes from Redis at once (its first connection is awaited)', async () => {
      const config = parseConfig(
        {
          ...baseConfig(),
          rate_limits: {
            kind: 'redis',
            redis_url_env: 'OUTAGE_REDIS_URL',
            redis_on_unavailable: 'fail_closed',
          },
        },
        'test',
        {},
      );
      const opened = await openLimiter(
        config,
        { OUTAGE_REDIS_URL: redis.url },
        replicas[0]!.store,
        pino({ level: 'silent' }),
      );
      try {
        const size = { ratePerSecond: 1, burst: 5 };
        const taken = await opened.limiter.takeAll([{ bucketKey: 'fresh', units: 1, size }], Date.now());
        expect(taken.allowed).toBe(true);
      } finally {
        await opened.close();
      }
    });

    it('limits in Redis, then in the store while it is down, then in Redis again once it answers', async () => {
      // Redis up: 4 calls, taken from Redis.
      await inspect.connect();
      const before = await burst(replicas, 4);
      expect(before.admitted).toBe(4);
      const key = `${PREFIX}inf:project:prj_b:requests`;
      expect(Number(await inspect.hget(key, 'tokens'))).toBeLessThanOrEqual(LIMIT - 4 + 1);
      inspect.disconnect();

      // Redis killed: 3x the limit over both replicas; the store's one bucket admits the limit once.
      await redis.kill();
      const started = Date.now();
      const during = await burst(replicas, 3 * LIMIT);
      const elapsed = Date.now() - started;
      expect(during.admitted).toBeGreaterThanOrEqual(LIMIT);
      expect(during.admitted).toBeLessThanOrEqual(LIMIT + refill(elapsed));
      const refused = during.results.filter((result) => result.status === 429);
      for (const result of refused) {
        expect(result.headers.get('svc-rate-limited')).toBe('project_requests');
        expect(Number(result.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // The documented bound: what Redis admitted before the outage is not in the store's bucket, so
      // the minute around the switch admitted up to one extra burst (4 + 10 here), never more.
      expect(before.admitted + during.admitted).toBeLessThanOrEqual(
        before.admitted + LIMIT + refill(elapsed),
      );
      // Still the store's bucket: more calls on either replica are refused.
      expect((await messages(replicas[1]!.url, SECRET)).status).toBe(429);
      // One warning per replica for the episode, and its metrics.
      for (const replica of replicas)
        expect(linesOf(replica, 'rate_limits_redis_unavailable')).toHaveLength(1);
      const episode = await outageSeries(replicas[0]!);
      expect(episode.unavailable).toBe(1);
      expect(episode.store).toBeGreaterThanOrEqual((3 * LIMIT) / 2);

      // Fail-closed: 503 with Retry-After in the endpoint's dialect; nothing was reserved.
      const refusedMessages = await messages(closed.url, SECRET);
      expect(refusedMessages.status).toBe(503);
      expect(refusedMessages.body.type).toBe('error');
      expect(refusedMessages.body.error.type).toBe('api_error');
      expect(refusedMessages.body.error.code).toBe('rate_limits_unavailable');
      expect(refusedMessages.body.error.message).toMatch(/rate-limit service cannot be reached/);
      expect(Number(refusedMessages.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const governance = await call(closed.url, 'POST', '/svc/v1/runs', { key: SECRET, body: {} });
      expect(governance.status).toBe(503);
      expect(governance.body.error.code).toBe('rate_limits_unavailable');
      expect(governance.headers.get('retry-after')).not.toBeNull();
      // A caller no inference limit applies to is not refused (prj_a has none).
      const unlimited = await messages(closed.url, await closed.key('prj_a', ['inference']));
      expect(unlimited.status).toBe(200);

      // Redis back (empty: nothing was persisted): each replica's probe finds it within a few intervals.
      await redis.restart();
      const restarted = Date.now();
      for (const replica of [...replicas, closed])
        await eventually(
          async () => linesOf(replica, 'rate_limits_redis_reachable').length,
          (count) => count === 1,
          10_000,
        );
      // The documented bound: the client's reconnect backoff (at most 2 s) plus 1.5 probe intervals.
      const back = Date.now() - restarted;
      console.info(`[redis outage] every replica back on Redis ${back} ms after its restart`);
      expect(back).toBeLessThan(2000 + 1.5 * PROBE_MS + 1000);
      const ended = JSON.parse(linesOf(replicas[0]!, 'rate_limits_redis_reachable')[0]!);
      expect(ended.answered_by_fallback).toBeGreaterThan(0);
      expect(ended.outage_ms).toBeGreaterThan(0);
      expect(JSON.parse(linesOf(closed, 'rate_limits_redis_reachable')[0]!).refused).toBeGreaterThan(0);
      expect(await outageSeries(replicas[0]!)).toMatchObject({ unavailable: 0, store: episode.store });
      expect((await outageSeries(closed)).refused).toBeGreaterThanOrEqual(2);
      // The fail-closed refusal is a refused reservation of its own reason, not a store outage.
      expect(await metricsOf.get(closed)!.exposition()).toMatch(
        /^svc_reservations_refused_total\{[^}]*project="prj_b"[^}]*reason="rate_limits_unavailable"\} 1$/m,
      );
      // Redis's new bucket is full, the store's is empty: the limit admitted now proves it is Redis.
      const after = await burst(replicas, 2 * LIMIT);
      expect(after.admitted).toBe(LIMIT);
      await inspect.connect();
      expect(Number(await inspect.hget(key, 'tokens'))).toBeLessThan(1);
      expect((await messages(closed.url, SECRET)).status).toBe(429);
    }, 60_000);
  });
});
