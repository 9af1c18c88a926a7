/** The limiter contract on memory, SQLite, PostgreSQL (two pools = two replicas) and Redis. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describePostgres, type TestDatabase } from '../../test/support/postgres.js';
import { describeRedis, REDIS_URL } from '../../test/support/redis.js';
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
      const limiter = new RedisLimiter({ url: REDIS_URL, keyPrefix: prefix, logger });
      await limiter.connect();
      closers.push(() => limiter.close());
      return limiter;
    },
  }));
});

it('falls back to per-process buckets while Redis is unreachable, instead of failing requests', async () => {
  const limiter = new RedisLimiter({
    url: 'redis://127.0.0.1:1',
    keyPrefix: 'x:',
    logger,
    commandTimeoutMs: 200,
  });
  await limiter.connect().catch(() => undefined);
  const size = { ratePerSecond: 1, burst: 2 };
  const answers = [];
  for (let index = 0; index < 3; index++) answers.push((await limiter.take('k', 1, size, 1000)).allowed);
  expect(answers).toEqual([true, true, false]);
  await limiter.close();
});
