/**
 * Redis for tests (optional in the product): describeRedis runs a suite when a server answers at
 * SVC_TEST_REDIS_URL (default redis://127.0.0.1:6379); under CI=true a missing server fails loudly.
 * Each test uses its own random key prefix, so parallel runs never share buckets.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { describe, it } from 'vitest';

export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether a Redis answers PING at 127.0.0.1:`port` (or `host`). */
async function answersPing(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => socket.write('PING\r\n'));
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

async function probe(): Promise<boolean> {
  const url = new URL(REDIS_URL);
  return answersPing(Number(url.port || 6379), url.hostname, 1000);
}

export const redisAvailable: boolean = await probe();

/** Runs `suite` when `available`; else fails under CI=true (`needs` says what is missing) or skips. */
function describeWhen(name: string, available: boolean, needs: string, suite: () => void): void {
  if (available) {
    describe(name, suite);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs its server (CI=true: these tests may not be skipped)', () => {
        throw new Error(needs);
      });
    });
    return;
  }
  console.warn(`[${name}] skipped: ${needs}`);
  describe.skip(name, suite);
}

export function describeRedis(name: string, suite: () => void): void {
  describeWhen(
    name,
    redisAvailable,
    `Redis at ${REDIS_URL} is not reachable; start it or set SVC_TEST_REDIS_URL.`,
    suite,
  );
}

/** A redis-server of the test's own (never the shared one), on a free loopback port, without persistence. */
export interface OwnRedis {
  url: string;
  /** SIGKILL: the server dies at once, its buckets with it. */
  kill(): Promise<void>;
  /** Starts a fresh server on the same port (empty: nothing was persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const redisServerInstalled: boolean =
  spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** Like describeRedis, for suites that run their own redis-server (it must be installed; CI=true: required). */
export function describeOwnRedis(name: string, suite: () => void): void {
  describeWhen(
    name,
    redisServerInstalled,
    'redis-server is not installed (apt-get install redis-server).',
    suite,
  );
}

export async function startOwnRedis(port: number): Promise<OwnRedis> {
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = started;
    const deadline = Date.now() + 5000;
    while (!(await answersPing(port))) {
      if (started.exitCode !== null)
        throw new Error(`redis-server on port ${port} exited (${started.exitCode})`);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer in 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, restart: start, stop: kill };
}
