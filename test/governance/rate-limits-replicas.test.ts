/**
 * Inference rate limits shared by two replicas: two gateways on one PostgreSQL database (the
 * store's buckets), and two gateways that share nothing but one Redis (each on its own SQLite
 * file). Concurrent calls spread over both replicas are admitted exactly up to the limit, not
 * twice it.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeySecret } from '../../src/lib/secrets.js';
import { RedisLimiter } from '../../src/limits/redis-limiter.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { describeRedis, REDIS_URL } from '../support/redis.js';
import { messages, moderation, rateLimitedConfig } from './rate-limit-support.js';
import { Api } from './support.js';

const ENVIRONMENT = { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' };
const TPM_SECRET = newKeySecret();

describePostgres('inference rate limits across two PostgreSQL replicas', () => {
  let database: TestDatabase;
  let sim: Simulator;
  const replicas: TestGateway[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    sim = await startSimulator();
    const options = {
      store: 'postgres' as const,
      databaseUrl: database.url,
      environment: ENVIRONMENT,
      config: rateLimitedConfig(sim.url, { requests_per_minute: 12 }),
    };
    replicas.push(await startTestGateway(options));
    replicas.push(await startTestGateway(options));
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await sim?.close();
    await database?.drop();
  });

  it("admits exactly a key's requests per minute over both replicas", async () => {
    const admin = new Api(replicas[0]!.url, await replicas[0]!.key('prj_a', ['keys:admin']));
    const created = await admin.post('/svc/v1/keys', {
      scopes: ['inference'],
      inference_limits: { requests_per_minute: 7 },
    });
    expect(created.status).toBe(201);
    const statuses = await Promise.all(
      Array.from({ length: 24 }, (_, index) => messages(replicas[index % 2]!.url, created.body.secret)),
    );
    const codes = statuses.map((result) => result.status);
    expect(codes.filter((status) => status === 200)).toHaveLength(7);
    expect(codes.filter((status) => status === 429)).toHaveLength(17);
  });

  it("admits exactly a Project's requests per minute over both replicas and several keys", async () => {
    const keys = [
      await replicas[0]!.key('prj_b', ['inference']),
      await replicas[1]!.key('prj_b', ['inference']),
    ];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, index) => moderation(replicas[index % 2]!.url, keys[index % 2]!)),
    );
    const codes = results.map((result) => result.status);
    expect(codes.filter((status) => status === 200)).toHaveLength(12);
    const refused = results.filter((result) => result.status === 429);
    expect(refused).toHaveLength(18);
    for (const result of refused) expect(result.headers.get('svc-rate-limited')).toBe('project_requests');
  });
});

describeRedis('inference rate limits across two replicas sharing one Redis', () => {
  let sim: Simulator;
  const replicas: TestGateway[] = [];
  const limiters: RedisLimiter[] = [];

  beforeAll(async () => {
    sim = await startSimulator();
    const keyPrefix = `svc-test:${randomBytes(6).toString('hex')}:`;
    for (let index = 0; index < 2; index++) {
      const limiter = new RedisLimiter({
        url: REDIS_URL,
        keyPrefix,
        logger: pino({ level: 'silent' }),
        onUnavailable: 'fail_closed',
      });
      await limiter.connect();
      limiters.push(limiter);
      // Each replica on its own SQLite file: the only thing they share is Redis.
      replicas.push(
        await startTestGateway({
          limiter,
          environment: { ...ENVIRONMENT, TPM_KEY_SECRET: TPM_SECRET },
          config: {
            ...rateLimitedConfig(sim.url, { requests_per_minute: 9, tokens_per_minute: 1_000_000 }),
            keys: [
              {
                id: 'key_tpm',
                project: 'prj_a',
                scopes: ['inference'],
                secret_env: 'TPM_KEY_SECRET',
                inference_limits: { tokens_per_minute: 5000 },
              },
            ],
          },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    for (const limiter of limiters) await limiter.close();
    await sim?.close();
  });

  it("admits exactly a Project's requests per minute over both replicas", async () => {
    const keys = [
      await replicas[0]!.key('prj_b', ['inference']),
      await replicas[1]!.key('prj_b', ['inference']),
    ];
    const results = await Promise.all(
      Array.from({ length: 26 }, (_, index) => messages(replicas[index % 2]!.url, keys[index % 2]!)),
    );
    const codes = results.map((result) => result.status);
    expect(codes.filter((status) => status === 200)).toHaveLength(9);
    expect(codes.filter((status) => status === 429)).toHaveLength(17);
    const admitted = results.find((result) => result.status === 200)!;
    expect(admitted.headers.get('vendora-ratelimit-requests-limit')).toBe('9');
    expect(admitted.headers.get('vendora-ratelimit-tokens-limit')).toBe('1000000');
  });

  it('corrects tokens at settlement in Redis: a configured key sees the refund on the other replica', async () => {
    sim.setBehaviour({ usage: { input_tokens: 10, output_tokens: 5 } });
    const first = await messages(replicas[0]!.url, TPM_SECRET, 4000);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers.get('vendora-ratelimit-tokens-limit')).toBe('5000');
    expect(Number(first.headers.get('vendora-ratelimit-tokens-remaining'))).toBeLessThan(1000);
    // Only the refund of the unused worst case (about 4,100 tokens) lets the second call in.
    const second = await messages(replicas[1]!.url, TPM_SECRET, 4000);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const third = await messages(replicas[0]!.url, TPM_SECRET, 4000);
    expect(third.status).toBe(200);
    // The keys API shows a configured key's limits as the configuration sets them.
    const admin = new Api(replicas[1]!.url, await replicas[1]!.key('prj_a', ['keys:admin']));
    expect((await admin.get('/svc/v1/keys/key_tpm')).body.inference_limits).toEqual({
      tokens_per_minute: 5000,
    });
  });
});
