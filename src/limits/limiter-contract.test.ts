/** The limiter contract on memory, SQLite, PostgreSQL (two pools = two replicas) and Redis. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describePostgres, type TestDatabase } from '../../test/support/postgres.js';
import { describeRedis, REDIS_URL } from '../../test/support/redis.js';
import { GatewayError } from '../errors/gateway-error.js';
import { PostgresStore } from '../store/postgres/postgres-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { describeLimiterContract } from './contract/limiter-contract.js';
import { MemoryLimiter } from './limiter.js';
import { RedisLimiter } from './redis-limiter.js';

const logger = pino({ level: 'silent' });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describeLimiterContract('memory (one replica)', () => ({
  open: async () => new MemoryLimiter(),
  shared: false,
}));

const folder = mkdtempSync(join(tmpdir(), 'svc-limiter-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
describeLimiterContract('SQLite store', () => ({
  shared: true,
  open: async () => {
    const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal', exclusive: false });
    await store.migrate();
    closers.push(() => store.close());
    return store.rateBuckets;
  },
}));

describePostgres('limiter on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  describeLimiterContract('PostgreSQL store', () => ({
    shared: true,
    open: async () => {
      const store = new PostgresStore({
        connectionString: database.url,
        poolMax: 4,
        connectTimeoutMs: 2000,
        statementTimeoutMs: 5000,
      });
      await store.migrate();
      closers.push(() => store.close());
      return store.rateBuckets;
    },
  }));
});

describeRedis('limiter on Redis', () => {
  const prefix = `svc-test:${randomBytes(6).toString('hex')}:`;
  describeLimiterContract('Redis', () => ({
    shared: true,
    open: async () => {
      const limiter = new RedisLimiter({
        url: REDIS_URL,
        keyPrefix: prefix,
        logger,
        onUnavailable: 'fail_closed',
      });
      await limiter.connect();
      closers.push(() => limiter.close());
      return limiter;
    },
  }));
});

it("takes from the store's buckets while Redis is unreachable, never from this process's memory", async () => {
  const store = new SqliteStore({
    path: join(folder, 'fallback.db'),
    synchronous: 'normal',
    exclusive: false,
  });
  await store.migrate();
  closers.push(() => store.close());
  const options = { url: 'redis://127.0.0.1:1', keyPrefix: 'x:', logger, commandTimeoutMs: 200 };
  const limiters = [1, 2].map(
    () => new RedisLimiter({ ...options, onUnavailable: { fallback: store.rateBuckets } }),
  );
  for (const limiter of limiters) {
    await limiter.connect().catch(() => undefined);
    closers.push(() => limiter.close());
  }
  const size = { ratePerSecond: 1, burst: 2 };
  const answers = [];
  // Two replicas on one store: together they admit the burst, not twice it.
  for (let index = 0; index < 4; index++)
    answers.push((await limiters[index % 2]!.take('k', 1, size, 1000)).allowed);
  expect(answers).toEqual([true, true, false, false]);
  expect(limiters.every((limiter) => limiter.degraded)).toBe(true);
  expect((await store.rateBuckets.take('k', 1, size, 1000)).allowed).toBe(false);
});

it('refuses with 503 rate_limits_unavailable and Retry-After while Redis is unreachable, when fail_closed', async () => {
  const limiter = new RedisLimiter({
    url: 'redis://127.0.0.1:1',
    keyPrefix: 'x:',
    logger,
    commandTimeoutMs: 200,
    onUnavailable: 'fail_closed',
    probeIntervalMs: 2500,
  });
  await limiter.connect().catch(() => undefined);
  closers.push(() => limiter.close());
  const size = { ratePerSecond: 1, burst: 2 };
  const refusal = await limiter.takeAll([{ bucketKey: 'k', units: 1, size }], 1000).catch((error) => error);
  expect(refusal).toBeInstanceOf(GatewayError);
  expect(refusal.code).toBe('rate_limits_unavailable');
  expect(refusal.status).toBe(503);
  expect(refusal.options.retryAfter).toBe('3');
  // A correction that cannot be recorded is dropped, not thrown.
  await expect(limiter.adjustAll([{ bucketKey: 'k', units: 1, size }], 1000)).resolves.toBeUndefined();
});
