/**
 * The attempt runner over real HTTP (issue 9): local failures are not upstream failures, bodies
 * nested too deeply are refused before validation whether sent with a content-length or chunked,
 * each reachable settlement outcome lands in the audit trail by its name, a settlement the store
 * refuses at first is retried, and the attempt observer hears every step.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type {
  AttemptLabels,
  AttemptObserver,
  AttemptSettled,
  RefusalReason,
} from '../../src/observability/attempt-observer.js';
import type { Store } from '../../src/store/port.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { messagesHeaders } from '../support/simulated-gateway.js';
import {
  auditOfRun,
  eventually,
  expectVendoraError,
  Governance,
  type Json,
  messageBody,
  postMessages,
  startGateway,
} from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';
const DIRECT_CONNECTION = 'vendora.messages.2023-06-01';
const DEPTH = 6000;

/** A /v1/messages body whose tools[0].input_schema nests DEPTH levels (built as text: no recursion here). */
function deepMessagesBody(): string {
  const schema = `{"type":"object","properties":{"q":${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}}}`;
  return `{"model":"${DIRECT}","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${schema}}]}`;
}

/** POSTs `text` with transfer-encoding chunked (no content-length), in two chunks. */
function postChunked(
  url: string,
  path: string,
  headers: Record<string, string>,
  text: string,
): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const req = httpRequest(
      target,
      { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) as Json }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(text.length / 2);
    req.write(text.slice(0, half));
    req.end(text.slice(half));
  });
}

interface Heard {
  started: Array<{ labels: AttemptLabels; reservation: number }>;
  settled: AttemptSettled[];
  refused: RefusalReason[];
  routedAway: string[];
  fallback: Array<[string, string]>;
  withinCalls: number;
  firstBytes: number;
}

const heard: Heard = {
  started: [],
  settled: [],
  refused: [],
  routedAway: [],
  fallback: [],
  withinCalls: 0,
  firstBytes: 0,
};

const observer: AttemptObserver = {
  started(_id, labels, reservation) {
    heard.started.push({ labels, reservation });
    return {
      within(fn) {
        heard.withinCalls++;
        return fn();
      },
      firstByte() {
        heard.firstBytes++;
      },
      settled(result) {
        heard.settled.push(result);
      },
    };
  },
  refused(_labels, reason) {
    heard.refused.push(reason);
  },
  routedAway(_alias, connection) {
    heard.routedAway.push(connection);
  },
  fallback(_alias, from, to) {
    heard.fallback.push([from, to]);
  },
  held() {},
  settledHeld() {},
  leaseExpired() {},
};

/** Settlements the ledger's store refuses before letting one through (a pool that timed out). */
let settleFailures = 0;

function flakySettles(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'settle') {
        return async (input: Parameters<Store['settle']>[0]) => {
          if (settleFailures > 0) {
            settleFailures--;
            throw new Error('timeout exceeded when trying to connect');
          }
          return target.settle(input);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

let gateway: SimulatedGateway;
let key: string;
let governance: Governance;

beforeAll(async () => {
  gateway = await startGateway({ observer, ledgerStore: flakySettles });
  key = await gateway.key();
  governance = new Governance(gateway.url, key);
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
  settleFailures = 0;
  for (const list of [heard.started, heard.settled, heard.refused, heard.routedAway, heard.fallback])
    list.length = 0;
});

async function expectRunUntouched(runId: string): Promise<void> {
  const run = await governance.getRun(runId);
  expect([run.committed_micros_usd, run.reserved_micros_usd, run.unknown_attempts]).toEqual([0, 0, 0]);
  expect(await auditOfRun(gateway.store, runId)).toEqual([]);
}

describe('bodies nested too deeply answer 400 before validation, nothing upstream, nothing charged', () => {
  it('vendora dialect, with a content-length', async () => {
    const run = await governance.run(1_000_000);
    const headers = messagesHeaders(key, { 'x-svc-run-id': run.id });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers,
      body: deepMessagesBody(),
    });
    const body = (await response.json()) as Json;
    expectVendoraError({ status: response.status, headers: response.headers, body }, 400, 'invalid_request', {
      type: 'invalid_request_error',
    });
    expect(body.error.message).toMatch(/nests .* deeper than 128 levels/);
    expect(gateway.simulator.requests()).toHaveLength(0);
    await expectRunUntouched(run.id);
  });

  it('vendora dialect, sent chunked (was a 500)', async () => {
    const run = await governance.run(1_000_000);
    const result = await postChunked(
      gateway.url,
      '/v1/messages',
      messagesHeaders(key, { 'x-svc-run-id': run.id }),
      deepMessagesBody(),
    );
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(gateway.simulator.requests()).toHaveLength(0);
    await expectRunUntouched(run.id);
  });

  it('vendorb dialect (/v1/moderations), sent chunked', async () => {
    const text = `{"input":${'['.repeat(DEPTH)}"x"${']'.repeat(DEPTH)}}`;
    const result = await postChunked(
      gateway.url,
      '/v1/moderations',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      text,
    );
    expect(result.status).toBe(400);
    expect(result.body.type).toBeUndefined();
    expect(result.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('a body just under the limit is still accepted', async () => {
    let value: unknown = 'leaf';
    for (let level = 0; level < 100; level++) value = { a: value };
    const body = messageBody(DIRECT, {
      tools: [{ name: 't', input_schema: { type: 'object', properties: { q: value } } }],
    });
    const result = await postMessages(gateway.url, key, body);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  });
});

describe('a failure before any byte is sent settles not_sent at zero and is never retried', () => {
  async function withSigner(signer: () => never, check: () => Promise<void>): Promise<void> {
    const connection = gateway.upstreams.connections.get(DIRECT_CONNECTION)!;
    const original = connection.authHeaders;
    connection.authHeaders = signer;
    try {
      await check();
    } finally {
      connection.authHeaders = original;
    }
  }

  it('signing that fails (our bug): 500 in the vendora dialect, one not_sent attempt, no fallback', async () => {
    await withSigner(
      () => {
        throw new Error('signing key unreadable');
      },
      async () => {
        const run = await governance.run(1_000_000);
        // `fallback` has a second target: a not_sent local failure must not move on to it.
        const result = await postMessages(gateway.url, key, messageBody('fallback'), {
          'x-svc-run-id': run.id,
        });
        expectVendoraError(result, 500, 'internal_error', { type: 'api_error' });
        expect(gateway.simulator.requests()).toHaveLength(0);
        const audit = await auditOfRun(gateway.store, run.id);
        expect(
          audit.map((entry) => [entry.connection, entry.outcome, entry.state, entry.costMicrosUsd]),
        ).toEqual([[DIRECT_CONNECTION, 'not_sent', 'released', 0]]);
        const after = await governance.getRun(run.id);
        expect([after.committed_micros_usd, after.reserved_micros_usd, after.unknown_attempts]).toEqual([
          0, 0, 0,
        ]);
        expect(heard.fallback).toEqual([]);
      },
    );
  });

  it('a body too deep to serialise (client input): 400, not_sent, nothing upstream', async () => {
    await withSigner(
      () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
      async () => {
        const run = await governance.run(1_000_000);
        const result = await postMessages(gateway.url, key, messageBody('fallback'), {
          'x-svc-run-id': run.id,
        });
        expectVendoraError(result, 400, 'invalid_request', { type: 'invalid_request_error' });
        expect(gateway.simulator.requests()).toHaveLength(0);
        expect((await auditOfRun(gateway.store, run.id)).map((entry) => entry.outcome)).toEqual(['not_sent']);
      },
    );
  });
});

describe('settlement outcomes by name, through real HTTP', () => {
  it('completed: the actual cost; refused_upstream: 0; unknown: the whole reservation', async () => {
    const run = await governance.run(10_000_000);
    const headers = { 'x-svc-run-id': run.id };
    expect((await postMessages(gateway.url, key, messageBody(DIRECT), headers)).status).toBe(200);
    gateway.simulator.setBehaviour({ status: 429 }, { model: 'up-vendora.messages.2023-06-01' });
    expect((await postMessages(gateway.url, key, messageBody(DIRECT), headers)).status).toBe(429);
    gateway.simulator.setBehaviour({ dropBeforeResponse: true }, { model: 'up-vendora.messages.2023-06-01' });
    expect(
      (await postMessages(gateway.url, key, messageBody(DIRECT), headers)).status,
    ).toBeGreaterThanOrEqual(500);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit.map((entry) => [entry.outcome, entry.httpStatus])).toEqual([
      ['completed', 200],
      ['refused_upstream', 429],
      ['unknown', null],
    ]);
    expect(audit[0]!.costMicrosUsd).toBeGreaterThan(0);
    expect(audit[0]!.costMicrosUsd).toBeLessThan(audit[0]!.reservationMicrosUsd);
    expect(audit[1]!.costMicrosUsd).toBe(0);
    expect(audit[2]!.costMicrosUsd).toBe(audit[2]!.reservationMicrosUsd);
    const after = await governance.getRun(run.id);
    expect(after.unknown_attempts).toBe(1);
    expect(after.reserved_micros_usd).toBe(0);
  });
});

describe('settlement retries', () => {
  it('a settlement the store refuses twice is retried and lands at its actual cost (never unknown)', async () => {
    const run = await governance.run(1_000_000);
    settleFailures = 2;
    const result = await postMessages(gateway.url, key, messageBody(DIRECT), { 'x-svc-run-id': run.id });
    expect(result.status).toBe(200);
    const entry = await eventually(
      async () => (await auditOfRun(gateway.store, run.id))[0],
      5000,
      'the settlement',
    );
    expect(entry.outcome).toBe('completed');
    expect(entry.costMicrosUsd).toBeLessThan(entry.reservationMicrosUsd);
    const after = await governance.getRun(run.id);
    expect([after.reserved_micros_usd, after.unknown_attempts]).toEqual([0, 0]);
    expect(after.committed_micros_usd).toBe(entry.costMicrosUsd);
    expect(settleFailures).toBe(0);
  });
});

describe('the attempt observer', () => {
  it('hears started, within, firstByte and settled with the outcome, and refusals', async () => {
    const run = await governance.run(1_000_000);
    expect(
      (await postMessages(gateway.url, key, messageBody(DIRECT), { 'x-svc-run-id': run.id })).status,
    ).toBe(200);
    expect(heard.started).toHaveLength(1);
    expect(heard.started[0]!.labels).toMatchObject({
      endpoint: '/v1/messages',
      alias: DIRECT,
      connection: DIRECT_CONNECTION,
      primitive: 'messages',
      streamed: false,
      runId: run.id,
    });
    expect([heard.withinCalls > 0, heard.firstBytes > 0]).toEqual([true, true]);
    expect(heard.settled.map((settled) => settled.outcome)).toEqual(['completed']);
    expect(heard.settled[0]!.tokens?.outputTokens).toBeGreaterThan(0);

    const tiny = await governance.run(1);
    const refused = await postMessages(gateway.url, key, messageBody(DIRECT), { 'x-svc-run-id': tiny.id });
    expect(refused.body.error.code).toBe('run_budget_exceeded');
    expect(heard.refused).toEqual(['run_budget_exceeded']);
  });

  it('hears fallback from routing', async () => {
    gateway.simulator.setBehaviour({ status: 503 }, { model: 'up-first' });
    const result = await postMessages(gateway.url, key, messageBody('fallback'));
    expect(result.status).toBe(200);
    expect(heard.fallback).toEqual([[DIRECT_CONNECTION, 'compat.chat-embeddings.v1']]);
    expect(heard.settled.map((settled) => settled.outcome)).toEqual(['refused_upstream', 'completed']);
  });
});
