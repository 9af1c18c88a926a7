/**
 * Streaming (SPEC.md 6, DESIGN "Cost and budgets"): events pass through with usage read from the
 * stream; an upstream drop, stall or missing finish ends the client's stream with an SSE `error`
 * event and no message_stop, and settles the attempt as unknown (whole reservation committed); a
 * client that goes away aborts the upstream request and settles as unknown too.
 */
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  auditOfRun,
  eventually,
  Governance,
  messageBody,
  PRICE,
  parseSse,
  priced,
  reservationFor,
  startGateway,
} from './support.js';

const DIRECT = 'vendora.messages.2023-06-01';
const IDLE_MS = 300;

let gateway: SimulatedGateway;
let key: string;
let governance: Governance;

beforeAll(async () => {
  gateway = await startGateway({
    connections: (simulatorUrl) => [
      {
        name: 'idle',
        profile: DIRECT,
        base_url: simulatorUrl,
        auth: { scheme: 'none' },
        timeouts: { connect_ms: 1000, first_byte_ms: 2000, idle_ms: IDLE_MS },
      },
    ],
    models: [{ alias: 'idle', targets: [{ connection: 'idle', model: 'up-idle', price: PRICE }] }],
  });
  key = await gateway.key();
  governance = new Governance(gateway.url, key);
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

function headers(runId: string): Record<string, string> {
  return {
    'x-api-key': key,
    'vendora-version': '2023-06-01',
    'content-type': 'application/json',
    'x-svc-run-id': runId,
  };
}

async function stream(body: Record<string, unknown>, runId: string) {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: headers(runId),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, events: parseSse(text) };
}

/** POSTs `payload` as a raw node:http request, so the test decides how the answer is read. */
function postRaw(
  runId: string,
  payload: string,
  onResponse: (response: IncomingMessage) => void,
): ClientRequest {
  const request = httpRequest(
    `${gateway.url}/v1/messages`,
    { method: 'POST', headers: { ...headers(runId), 'content-length': Buffer.byteLength(payload) } },
    onResponse,
  );
  request.end(payload);
  return request;
}

/** The Run once its attempts have settled (nothing reserved). */
function settledRun(runId: string) {
  return eventually(async () => {
    const current = await governance.getRun(runId);
    return current.reserved_micros_usd === 0 ? current : undefined;
  });
}

async function expectUnknownSettlement(runId: string, body: Record<string, unknown>, outcome: RegExp) {
  const run = await eventually(
    async () => {
      const current = await governance.getRun(runId);
      return current.reserved_micros_usd === 0 && current.unknown_attempts === 1 ? current : undefined;
    },
    5000,
    'the attempt to settle',
  );
  const reservation = reservationFor(body);
  expect(run.committed_micros_usd).toBe(reservation);
  expect(run.remaining_micros_usd).toBe(run.budget_micros_usd - reservation);
  const audit = await auditOfRun(gateway.store, runId);
  expect(audit).toHaveLength(1);
  expect(audit[0]!.state).toBe('unknown');
  expect(audit[0]!.reservationMicrosUsd).toBe(reservation);
  expect(audit[0]!.costMicrosUsd).toBe(reservation);
  expect(audit[0]!.outcome).toMatch(outcome);
}

function expectErrorEnding(events: ReturnType<typeof parseSse>) {
  const names = events.map((event) => event.event);
  expect(names[0]).toBe('message_start');
  expect(names).not.toContain('message_stop');
  expect(names.at(-1)).toBe('error');
  const error = events.at(-1)!.data;
  expect(error.type).toBe('error');
  expect(Object.keys(error.error).sort()).toEqual(['code', 'message', 'type']);
  expect(error.error.type).toBe('api_error');
}

describe('pass-through', () => {
  it('events pass through in order and the usage read from the stream settles the attempt', async () => {
    const usage = {
      input_tokens: 120,
      output_tokens: 45,
      cache_creation_input_tokens: 30,
      cache_read_input_tokens: 200,
    };
    gateway.simulator.setBehaviour(
      { usage, text: 'one two three four five six', deltas: 3 },
      { model: `up-${DIRECT}` },
    );
    const run = await governance.run(1_000_000);
    const body = messageBody(`m:${DIRECT}`, { stream: true });
    const result = await stream(body, run.id);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(result.headers.get('svc-route')).toBe(DIRECT);
    const names = result.events.map((event) => event.event);
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = result.events
      .filter((event) => event.event === 'content_block_delta')
      .map((event) => event.data.delta.text)
      .join('');
    expect(text).toBe('one two three four five six');
    expect(result.events[0]!.data.message.model).toBe(`m:${DIRECT}`);
    const expected = priced(PRICE, { input: 120, output: 45, cacheWrite: 30, cacheRead: 200 });
    const after = await settledRun(run.id);
    expect(after.committed_micros_usd).toBe(expected);
    expect(after.unknown_attempts).toBe(0);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      state: 'settled',
      outcome: 'completed',
      costMicrosUsd: expected,
      reservationMicrosUsd: reservationFor(body),
      usage: { inputTokens: 120, outputTokens: 45, cacheCreationInputTokens: 30, cacheReadInputTokens: 200 },
    });
    expect(result.headers.get('svc-attempt-id')).toBe(audit[0]!.attemptId);
  });

  it('a translated stream (chat completions upstream) is settled from its usage too', async () => {
    gateway.simulator.setBehaviour(
      { usage: { input_tokens: 40, output_tokens: 7 } },
      { model: 'up-compat.chat-embeddings.v1' },
    );
    const run = await governance.run(1_000_000);
    const result = await stream(messageBody('m:compat.chat-embeddings.v1', { stream: true }), run.id);
    expect(result.events.map((event) => event.event).at(-1)).toBe('message_stop');
    const after = await settledRun(run.id);
    expect(after.committed_micros_usd).toBe(priced(PRICE, { input: 40, output: 7 }));
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit[0]!.usage).toMatchObject({ inputTokens: 40, outputTokens: 7 });
  });

  it('a client that reads slowly gets a large stream whole: the upstream waits for it, nothing is lost', async () => {
    // About 10 MB of events, more than the loopback sockets buffer on both sides: the gateway waits
    // for the client to drain and leaves the upstream's chunks unread, so its upstream connection is
    // paused (past 64 KiB queued, upstream-body.ts) until the client reads again. Checked when
    // written: four pauses and resumes per run; 3.6 MB fitted in the buffers and paused nothing.
    const words = 'word '.repeat(2_000_000).trim();
    gateway.simulator.setBehaviour({ text: words, deltas: 3_000 }, { model: `up-${DIRECT}` });
    const run = await governance.run(50_000_000);
    const body = messageBody(`m:${DIRECT}`, { stream: true });
    const payload = JSON.stringify(body);
    const text = await new Promise<string>((resolve, reject) => {
      const request = postRaw(run.id, payload, (response) => {
        const chunks: Buffer[] = [];
        let paused = false;
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (!paused) {
            paused = true;
            response.pause();
            setTimeout(() => response.resume(), 500);
          }
        });
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.on('error', reject);
      });
      request.on('error', reject);
    });
    const events = parseSse(text);
    expect(events.at(-1)!.event).toBe('message_stop');
    const received = events
      .filter((event) => event.event === 'content_block_delta')
      .map((event) => event.data.delta.text)
      .join('');
    expect(received).toBe(words);
    const after = await settledRun(run.id);
    expect(after.unknown_attempts).toBe(0);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit[0]).toMatchObject({ state: 'settled', outcome: 'completed' });
  });
});

describe('streams that end badly settle as unknown', () => {
  it('upstream drop mid-stream: SSE error event, no message_stop, whole reservation committed', async () => {
    gateway.simulator.setBehaviour({ dropAfterEvents: 4, deltas: 6 }, { model: `up-${DIRECT}` });
    const run = await governance.run(1_000_000);
    const body = messageBody(`m:${DIRECT}`, { stream: true });
    const result = await stream(body, run.id);
    expect(result.status).toBe(200);
    expectErrorEnding(result.events);
    expect(result.events.filter((event) => event.event === 'content_block_delta').length).toBeLessThanOrEqual(
      2,
    );
    await expectUnknownSettlement(run.id, body, /^unknown$/);
  });

  it('upstream stall beyond the idle timeout: SSE error event, unknown settlement', async () => {
    gateway.simulator.setBehaviour({ stallAfterEvents: 3 }, { model: 'up-idle' });
    const run = await governance.run(1_000_000);
    const body = messageBody('idle', { stream: true });
    const started = Date.now();
    const result = await stream(body, run.id);
    expect(Date.now() - started).toBeLessThan(IDLE_MS + 1500);
    expectErrorEnding(result.events);
    await expectUnknownSettlement(run.id, body, /^unknown$/);
  });

  it('a stream that ends without its finish (omitFinish): SSE error event, unknown settlement', async () => {
    gateway.simulator.setBehaviour({ omitFinish: true }, { model: `up-${DIRECT}` });
    const run = await governance.run(1_000_000);
    const body = messageBody(`m:${DIRECT}`, { stream: true });
    const result = await stream(body, run.id);
    expectErrorEnding(result.events);
    expect(result.events.at(-1)!.data.error.message).toContain('ended before the message was complete');
    await expectUnknownSettlement(run.id, body, /^unknown$/);
  });

  it('a client that disconnects mid-stream aborts the upstream request; the attempt settles as unknown', async () => {
    gateway.simulator.setBehaviour(
      { eventDelayMs: 100, deltas: 60, text: 'word '.repeat(60).trim() },
      { model: `up-${DIRECT}` },
    );
    const run = await governance.run(1_000_000);
    const body = messageBody(`m:${DIRECT}`, { stream: true });
    const payload = JSON.stringify(body);
    const disconnectedAt = await new Promise<number>((resolve, reject) => {
      const request = postRaw(run.id, payload, (response) => {
        let received = '';
        response.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (received.includes('content_block_delta')) {
            request.destroy();
            resolve(Date.now());
          }
        });
        response.on('error', () => undefined);
      });
      request.on('error', (error) => {
        if (!request.destroyed) reject(error);
      });
    });
    const recorded = await eventually(
      () => {
        const [sent] = gateway.simulator.requests({ model: `up-${DIRECT}` });
        return sent?.closedEarlyAt !== undefined ? sent : undefined;
      },
      3000,
      'the simulator to see the upstream socket close',
    );
    // The whole answer would take 6 s; the upstream request ended within a second of the client leaving.
    expect(recorded.closedEarlyAt! - disconnectedAt).toBeLessThan(1000);
    await expectUnknownSettlement(run.id, body, /^unknown$/);
  });
});
