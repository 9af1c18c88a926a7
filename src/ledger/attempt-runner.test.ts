/**
 * The attempt runner's stream pipe: when the last text of a stream goes out relative to its
 * settlement. Served alone, every text is yielded as it comes and leaves the socket before the
 * settlement commits (a call's bytes never wait for its own settlement); while the process serves
 * other calls, the text that finishes the stream is yielded only once the settlement is in the
 * store, as the generator's last value, so the client writer sends it with the end of the response
 * in one write.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClientGone } from '../lib/cancel-signal.js';
import { systemClock } from '../lib/clock.js';
import type { UpstreamResponse } from '../primitives/shared/upstream-call.js';
import type { SettleInput } from '../store/port.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { AttemptRunner, type StreamReader, type UpstreamExchange } from './attempt-runner.js';
import { type AttemptPlan, Ledger } from './ledger.js';

const PLAN: AttemptPlan = {
  projectId: 'prj_test',
  keyId: 'key_test',
  runId: null,
  endpoint: 'messages',
  alias: 'model',
  connection: 'upstream',
  profile: 'vendora.messages.2023-06-01',
  upstreamModel: 'up-1',
  primitive: 'messages',
  streamed: true,
  reservationMicrosUsd: 1000,
};

const USAGE = { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

/** Passes each chunk's text through; finished once a chunk carried `message_stop`. */
function textReader(): StreamReader {
  let finished = false;
  return {
    push(chunk) {
      const text = chunk.toString();
      if (text.includes('message_stop')) finished = true;
      return text;
    },
    finished: () => finished,
    end: () => ({ text: '', complete: finished }),
    interrupted: () => 'event: error\n\n',
    usage: () => USAGE,
    cost: () => 10,
  };
}

/** An upstream answering 200 with `body`, whose chunks the test writes. */
function exchangeOver(body: PassThrough): UpstreamExchange<unknown> {
  return {
    send: async () => ({ status: 200, headers: {}, body }) as unknown as UpstreamResponse,
    refusal: () => ({ status: 500, message: 'unused', retryable: false }),
    read: () => Promise.reject(new Error('unused')),
    stream: () => textReader(),
  };
}

let folder: string;
let store: SqliteStore;
let ledger: Ledger;
let runner: AttemptRunner;
/** Attempt ids whose settlement the store has committed, in order. */
let settled: string[];
/** Runs as each settlement starts (before its commit). */
let beforeSettle: () => void;

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'svc-runner-'));
  store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await store.migrate();
  settled = [];
  beforeSettle = () => {};
  const settle = store.settle.bind(store);
  store.settle = async (input: SettleInput) => {
    beforeSettle();
    await settle(input);
    settled.push(input.attemptId);
  };
  ledger = new Ledger(store, systemClock, pino({ level: 'silent' }), {
    leaseMs: 60_000,
    reaperIntervalMs: 60_000,
  });
  runner = new AttemptRunner(ledger);
});
afterEach(async () => {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Starts a stream; `stream.next()` reads its texts, each with whether the attempt had settled by then. */
async function openStream() {
  const body = new PassThrough();
  const result = await runner.callStreamed(PLAN, exchangeOver(body), new ClientGone());
  if (!result.ok) throw new Error('the stream did not open');
  const frames = result.frames;
  return {
    body,
    attemptId: result.attemptId,
    async next(): Promise<{ text: string; settled: boolean } | undefined> {
      const step = await frames.next();
      return step.done ? undefined : { text: step.value, settled: settled.includes(result.attemptId) };
    },
  };
}

describe('a stream that cannot be translated', () => {
  it('settles its attempt as unknown and answers upstream_error, so no attempt is left open', async () => {
    const body = new PassThrough();
    const exchange: UpstreamExchange<unknown> = {
      ...exchangeOver(body),
      stream: () => {
        throw new Error('no translator for this answer');
      },
    };
    const result = await runner.callStreamed(PLAN, exchange, new ClientGone());
    expect(result).toMatchObject({ ok: false, retryable: false, outcome: 'unknown' });
    expect(!result.ok && result.error.code).toBe('upstream_error');
    expect(settled).toHaveLength(1);
    expect(ledger.openAttempts).toBe(0);
    expect(body.destroyed).toBe(true);
  });
});

describe('the last text of a stream', () => {
  it('served alone: every text is yielded as it comes, before the settlement', async () => {
    const stream = await openStream();
    stream.body.write('event: content_block_delta\n\n');
    expect(await stream.next()).toEqual({ text: 'event: content_block_delta\n\n', settled: false });
    stream.body.end('event: message_stop\n\n');
    expect(await stream.next()).toEqual({ text: 'event: message_stop\n\n', settled: false });
    expect(await stream.next()).toBeUndefined();
    expect(settled).toEqual([stream.attemptId]);
  });

  it('served alone: a stream that arrived in one read is on the client socket before its settlement commits', async () => {
    // Node's http corks a response's socket until the next tick; a settlement committed in the
    // same turn as the write would hold the stream's first bytes behind its commit.
    const stream = await openStream();
    stream.body.end('event: content_block_delta\n\nevent: message_stop\n\n');
    let unsentAtSettlement = -1;
    const server = createServer(async (_request, response: ServerResponse) => {
      beforeSettle = () => {
        unsentAtSettlement = response.socket!.writableLength;
      };
      for (let step = await stream.next(); step; step = await stream.next()) response.write(step.text);
      response.end();
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      const { port } = server.address() as AddressInfo;
      const received = await new Promise<string>((done, failed) => {
        get({ host: '127.0.0.1', port }, (answer) => {
          let text = '';
          answer.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          answer.on('end', () => done(text));
        }).on('error', failed);
      });
      expect(received).toBe('event: content_block_delta\n\nevent: message_stop\n\n');
      expect(settled).toEqual([stream.attemptId]);
      expect(unsentAtSettlement).toBe(0);
    } finally {
      server.close();
    }
  });

  it('among other calls: the finishing text comes last, after the settlement is in the store', async () => {
    const other = await openStream();
    const stream = await openStream();
    stream.body.write('event: content_block_delta\n\n');
    expect(await stream.next()).toEqual({ text: 'event: content_block_delta\n\n', settled: false });
    // The chunk that finishes the stream, then a trailing one, then the end: held together.
    stream.body.write('event: message_stop\n\n');
    stream.body.end(': trailing\n\n');
    expect(await stream.next()).toEqual({
      text: 'event: message_stop\n\n: trailing\n\n',
      settled: true,
    });
    expect(await stream.next()).toBeUndefined();
    expect(settled).toEqual([stream.attemptId]);

    // The other call, now alone again, writes its finishing text at once.
    other.body.end('event: message_stop\n\n');
    expect(await other.next()).toEqual({ text: 'event: message_stop\n\n', settled: false });
    expect(await other.next()).toBeUndefined();
    expect(settled).toEqual([stream.attemptId, other.attemptId]);
    expect(ledger.openAttempts).toBe(0);
  });

  it('among other calls: a stream cut short still sends what it held, then its error', async () => {
    const other = await openStream();
    const stream = await openStream();
    // The pipe reads (and holds) the finishing chunk, then the upstream connection is lost.
    const last = stream.next();
    stream.body.write('event: message_stop\n\n');
    await new Promise((resolve) => setImmediate(resolve));
    stream.body.destroy(new Error('connection lost'));
    expect((await last)?.text).toBe('event: message_stop\n\nevent: error\n\n');
    expect(await stream.next()).toBeUndefined();
    other.body.end();
    while (await other.next());
  });
});
