/**
 * Redis for tests (optional in the product): describeRedis runs a suite when a server answers at
 * SVC_TEST_REDIS_URL (default redis://127.0.0.1:6379); under CI=true a missing server fails loudly.
 * Each test uses its own random key prefix, so parallel runs never share buckets.
 */
import { createConnection } from 'node:net';
import { describe, it } from 'vitest';

export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function probe(): Promise<boolean> {
  const url = new URL(REDIS_URL);
  return new Promise((done) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port || 6379) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.write('PING\r\n');
    });
    socket.once('data', (data) => {
      socket.destroy();
      done(data.toString().startsWith('+PONG'));
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

export const redisAvailable: boolean = await probe();

export function describeRedis(name: string, suite: () => void): void {
  if (redisAvailable) {
    describe(name, suite);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs Redis (CI=true: these tests may not be skipped)', () => {
        throw new Error(`Redis at ${REDIS_URL} is not reachable; start it or set SVC_TEST_REDIS_URL.`);
      });
    });
    return;
  }
  console.warn(
    `[${name}] skipped: Redis at ${REDIS_URL} is not reachable (set SVC_TEST_REDIS_URL to run it).`,
  );
  describe.skip(name, suite);
}
