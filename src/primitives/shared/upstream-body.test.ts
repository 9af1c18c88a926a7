import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientGone } from '../../lib/cancel-signal.js';
import { DispatchedBody, HIGH_WATER_MARK } from './upstream-body.js';
import { callUpstream, NotSentError, type UpstreamEndpoint, UpstreamFailure } from './upstream-call.js';

/** A DispatchController that records what the body asked of it. */
function fakeController() {
  const calls: string[] = [];
  let paused = false;
  const controller = {
    get aborted() {
      return calls.includes('abort');
    },
    get paused() {
      return paused;
    },
    get reason() {
      return null;
    },
    pause() {
      paused = true;
      calls.push('pause');
    },
    resume() {
      paused = false;
      calls.push('resume');
    },
    abort() {
      calls.push('abort');
    },
  } as unknown as Dispatcher.DispatchController;
  return { controller, calls };
}

describe('DispatchedBody', () => {
  it('gives queued chunks joined, then chunks as they come, then the end', async () => {
    const { controller } = fakeController();
    const body = new DispatchedBody(controller);
    body.push(Buffer.from('ab'));
    body.push(Buffer.from('cd'));
    const iterator = body[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.toString()).toBe('abcd');
    const waiting = iterator.next();
    body.push(Buffer.from('ef'));
    expect((await waiting).value?.toString()).toBe('ef');
    const ending = iterator.next();
    body.end();
    expect(await ending).toEqual({ done: true, value: undefined });
  });

  it('pauses the connection past the high-water mark and resumes it once the reader takes the chunks', async () => {
    const { controller, calls } = fakeController();
    const body = new DispatchedBody(controller);
    body.push(Buffer.alloc(HIGH_WATER_MARK - 1));
    expect(calls).toEqual([]);
    body.push(Buffer.alloc(1));
    expect(calls).toEqual(['pause']);
    const chunk = await body[Symbol.asyncIterator]().next();
    expect(chunk.value?.length).toBe(HIGH_WATER_MARK);
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('drops what is queued on a failure and throws the same error to the reader', async () => {
    const { controller } = fakeController();
    const body = new DispatchedBody(controller);
    body.push(Buffer.from('lost'));
    const failure = new Error('socket closed');
    body.fail(failure);
    await expect(body[Symbol.asyncIterator]().next()).rejects.toBe(failure);
    await expect(body.text()).rejects.toBe(failure);
  });

  it('aborts the call when destroyed before its end, and not after it', async () => {
    const open = fakeController();
    const early = new DispatchedBody(open.controller);
    const waiting = early[Symbol.asyncIterator]().next();
    early.destroy();
    expect(open.calls).toEqual(['abort']);
    expect(await waiting).toEqual({ done: true, value: undefined });

    const complete = fakeController();
    const late = new DispatchedBody(complete.controller);
    late.push(Buffer.from('x'));
    late.end();
    late.destroy();
    expect(complete.calls).toEqual([]);
  });

  it('aborts the call when a for-await loop leaves early', async () => {
    const { controller, calls } = fakeController();
    const body = new DispatchedBody(controller);
    body.push(Buffer.from('first'));
    for await (const chunk of body) {
      expect(chunk.toString()).toBe('first');
      break;
    }
    expect(calls).toEqual(['abort']);
  });

  it('reads text as UTF-8 without a byte order mark, across chunk boundaries', async () => {
    const { controller } = fakeController();
    const body = new DispatchedBody(controller);
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo ✓', 'utf8')]);
    for (let index = 0; index < bytes.length; index += 2) body.push(bytes.subarray(index, index + 2));
    body.end();
    expect(await body.text()).toBe('héllo ✓');
  });

  it('dumps a small rest and closes the connection instead of reading a large one', async () => {
    const small = fakeController();
    const quiet = new DispatchedBody(small.controller);
    quiet.push(Buffer.alloc(10));
    quiet.end();
    await expect(quiet.dump()).resolves.toBeNull();
    expect(small.calls).toEqual([]);

    const large = fakeController();
    const loud = new DispatchedBody(large.controller);
    const dumped = loud.dump();
    for (let index = 0; index < 3; index++) {
      loud.push(Buffer.alloc(60 * 1024));
      await sleep(1);
    }
    await expect(dumped).resolves.toBeNull();
    expect(large.calls).toContain('abort');
  });
});

describe('callUpstream over a real connection', () => {
  let server: Server | undefined;
  let agent: Agent | undefined;

  afterEach(async () => {
    await agent?.destroy();
    if (server) {
      server.closeAllConnections();
      await new Promise((done) => server!.close(done));
    }
    server = undefined;
    agent = undefined;
  });

  async function upstream(
    handle: (request: IncomingMessage, response: ServerResponse) => void,
    timeouts: { firstByteTimeoutMs?: number; idleTimeoutMs?: number } = {},
  ): Promise<UpstreamEndpoint> {
    server = createServer(handle);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    agent = new Agent();
    return {
      name: 'loopback',
      dispatcher: agent,
      origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      basePath: '/v1',
      firstByteTimeoutMs: timeouts.firstByteTimeoutMs ?? 5_000,
      idleTimeoutMs: timeouts.idleTimeoutMs ?? 5_000,
      authHeaders: () => ({ 'x-api-key': 'secret' }),
    };
  }

  it('sends the JSON body with its headers and reads the answer', async () => {
    let seen: { path?: string; key?: string; body?: string } = {};
    const endpoint = await upstream((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        seen = { path: request.url, key: String(request.headers['x-api-key']), body: text };
        response.writeHead(201, { 'content-type': 'application/json', 'x-extra': 'yes' });
        response.end('{"ok":true}');
      });
    });
    const answer = await callUpstream(endpoint, { path: '/messages', body: { a: 1 } });
    expect(answer.status).toBe(201);
    expect(answer.headers['x-extra']).toBe('yes');
    expect(await answer.body.text()).toBe('{"ok":true}');
    expect(seen).toEqual({ path: '/v1/messages', key: 'secret', body: '{"a":1}' });
  });

  it('streams a large answer in order to a slow reader', async () => {
    const total = 1024 * 1024;
    const payload = Buffer.alloc(total);
    for (let index = 0; index < total; index++) payload[index] = index % 251;
    const endpoint = await upstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(payload);
    });
    const answer = await callUpstream(endpoint, { path: '/big', body: {} });
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) {
      chunks.push(chunk);
      if (chunks.length % 4 === 0) await sleep(2);
    }
    expect(Buffer.concat(chunks).equals(payload)).toBe(true);
  });

  it('rejects as aborted when the signal fires before the answer, and when it fired before the call', async () => {
    const endpoint = await upstream(() => {
      // never answers
    });
    const gone = new ClientGone();
    const pending = callUpstream(endpoint, { path: '/slow', body: {}, signal: gone });
    await sleep(50);
    gone.abort();
    const failure = await pending.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect((failure as UpstreamFailure).kind).toBe('aborted');

    const before = new ClientGone();
    before.abort();
    const early = await callUpstream(endpoint, { path: '/never', body: {}, signal: before }).catch(
      (error: unknown) => error,
    );
    expect((early as UpstreamFailure).kind).toBe('aborted');
  });

  it('throws the signal reason to the body reader when the client goes mid-body, and closes the upstream request', async () => {
    let upstreamClosed: Promise<unknown> | undefined;
    const endpoint = await upstream((request, response) => {
      upstreamClosed = once(request.socket, 'close');
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('event: ping\ndata: {}\n\n');
    });
    const gone = new ClientGone();
    const answer = await callUpstream(endpoint, { path: '/stream', body: {}, signal: gone });
    const iterator = answer.body[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.toString()).toContain('ping');
    const next = iterator.next();
    gone.abort();
    await expect(next).rejects.toBe(gone.reason);
    await upstreamClosed;
  });

  it('closes the upstream request when the reader destroys the body before its end', async () => {
    let upstreamClosed: Promise<unknown> | undefined;
    const endpoint = await upstream(
      (request, response) => {
        upstreamClosed = once(request.socket, 'close');
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('event: ping\ndata: {}\n\n');
      },
      { idleTimeoutMs: 60_000 },
    );
    const answer = await callUpstream(endpoint, { path: '/stream', body: {} });
    await answer.body[Symbol.asyncIterator]().next();
    answer.body.destroy();
    await upstreamClosed;
  });

  it('throws undici’s error to the reader when the upstream drops mid-body', async () => {
    const endpoint = await upstream((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('event: ping\ndata: {}\n\n', () => setTimeout(() => request.socket.destroy(), 20));
    });
    const answer = await callUpstream(endpoint, { path: '/stream', body: {} });
    const failure = await (async () => {
      for await (const _chunk of answer.body) {
        // read until it fails
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(UpstreamFailure);
  });

  it('refuses a request undici cannot send as not sent, whether the dispatcher reports it or throws it', async () => {
    let requests = 0;
    const endpoint = await upstream((_request, response) => {
      requests++;
      response.end('{}');
    });
    const reported = await callUpstream(endpoint, {
      path: '/bad',
      body: {},
      headers: { 'x-bad': 'a\r\nb' },
    }).catch((error: unknown) => error);
    expect(reported).toBeInstanceOf(NotSentError);
    expect((reported as NotSentError).fault).toBe('gateway');
    const throwing = {
      ...endpoint,
      dispatcher: {
        dispatch() {
          throw new undiciErrors.InvalidArgumentError('refused at once');
        },
      } as unknown as Dispatcher,
    };
    const thrown = await callUpstream(throwing, { path: '/bad', body: {} }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(NotSentError);
    expect(requests).toBe(0);
  });

  it('rejects as a timeout when no headers come within the first-byte timeout', async () => {
    const endpoint = await upstream(
      () => {
        // never answers
      },
      { firstByteTimeoutMs: 100 },
    );
    const failure = await callUpstream(endpoint, { path: '/slow', body: {} }).catch(
      (error: unknown) => error,
    );
    expect((failure as UpstreamFailure).kind).toBe('timeout');
  });
});
