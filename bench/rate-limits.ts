/**
 * Cost of the inference rate limits per model call: one admission (takeAll over the key's and the
 * Project's requests and tokens buckets: 4 buckets) plus its settlement correction (adjust of the 2
 * tokens buckets), on each limiter adapter, at concurrency 1 and 16 on one key. Prints wall time
 * and this process's CPU per call (PostgreSQL and Redis do part of the work in their own processes).
 *
 *   node --import tsx bench/rate-limits.ts        (PostgreSQL: SVC_TEST_POSTGRES_URL or 127.0.0.1:5432;
 *                                                  Redis: SVC_TEST_REDIS_URL or 127.0.0.1:6379; each skipped when absent)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { systemClock } from '../src/lib/clock.js';
import { InferenceRateLimits } from '../src/limits/inference-limits.js';
import { MemoryLimiter, type MultiBucketLimiter } from '../src/limits/limiter.js';
import { RedisLimiter } from '../src/limits/redis-limiter.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const LIMITS = { requestsPerMinute: 1e9, tokensPerMinute: 1e12 };

async function measure(name: string, limiter: MultiBucketLimiter, total: number): Promise<void> {
  const limits = new InferenceRateLimits(limiter, systemClock, async () => ({
    key: LIMITS,
    project: LIMITS,
  }));
  const call = async () => {
    const ticket = await limits.admit({ projectId: 'prj_bench', keyId: 'key_bench', worstCaseTokens: 4096 });
    await ticket!.settle({ committedWhole: false, usedTokens: 200 });
  };
  for (const concurrency of [1, 16]) {
    await call();
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let round = 0; round < total / concurrency; round++)
      await Promise.all(Array.from({ length: concurrency }, call));
    const used = process.cpuUsage(cpu);
    const wall = (performance.now() - started) / total;
    const cpuPerCall = (used.user + used.system) / total;
    console.log(
      `${name.padEnd(10)} c${String(concurrency).padEnd(3)} ${(wall * 1000).toFixed(0).padStart(6)} us wall/call  ${cpuPerCall.toFixed(0).padStart(5)} us CPU/call (this process)`,
    );
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function main() {
  await measure('memory', new MemoryLimiter(), 20_000);

  const folder = mkdtempSync(join(tmpdir(), 'svc-rate-bench-'));
  const sqlite = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await sqlite.migrate();
  await measure('sqlite', sqlite.rateBuckets, 4000);
  await sqlite.close();
  rmSync(folder, { recursive: true, force: true });

  const admin = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await reachable(admin)) {
    const name = `svc_rate_bench_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const store = new PostgresStore({
      connectionString: url.toString(),
      poolMax: 16,
      connectTimeoutMs: 2000,
      statementTimeoutMs: 5000,
    });
    await store.migrate();
    await measure('postgres', store.rateBuckets, 2000);
    await store.close();
    await client.query(`DROP DATABASE ${name}`);
    await client.end();
  } else console.log('postgres   skipped: not reachable');

  const redis = new RedisLimiter({
    url: process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    keyPrefix: `svc-bench:${randomBytes(4).toString('hex')}:`,
    logger: pino({ level: 'silent' }),
    onUnavailable: 'fail_closed',
  });
  try {
    await redis.connect();
    await measure('redis', redis, 4000);
  } catch {
    console.log('redis      skipped: not reachable');
  }
  await redis.close();
}

await main();
