/**
 * Portable routing (DESIGN "Routing, modes and the profile matrix"): targets that cannot carry a
 * request are routed away (named in svc-route-skipped), retryable failures before the first byte
 * move on to the next target with one ledger attempt each, non-retryable ones do not, and no
 * eligible target is a 400 naming every target and why.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  auditOfRun,
  eventually,
  expectVendoraError,
  Governance,
  messageBody,
  PRICE,
  parseSse,
  postMessages,
  startGateway,
  unusedPort,
} from './support.js';

const DIRECT = 'vendora.messages.2023-06-01';
const COMPAT = 'compat.chat-embeddings.v1';
const FIRST_BYTE_MS = 300;

let gateway: SimulatedGateway;
let key: string;
let governance: Governance;

const target = (connection: string, model: string) => ({ connection, model, price: PRICE });

beforeAll(async () => {
  const deadPort = await unusedPort();
  gateway = await startGateway({
    connections: (simulatorUrl) => [
      {
        name: 'dead',
        profile: DIRECT,
        base_url: `http://127.0.0.1:${deadPort}`,
        auth: { scheme: 'none' },
        timeouts: { connect_ms: 1000, first_byte_ms: 2000, idle_ms: 2000 },
      },
      {
        name: 'slow',
        profile: DIRECT,
        base_url: simulatorUrl,
        auth: { scheme: 'none' },
        timeouts: { connect_ms: 1000, first_byte_ms: FIRST_BYTE_MS, idle_ms: 2000 },
      },
    ],
    models: [
      { alias: 'dead-first', targets: [target('dead', 'up-dead'), target(DIRECT, 'up-alive')] },
      { alias: 'slow-first', targets: [target('slow', 'up-slow'), target(COMPAT, 'up-after-slow')] },
      { alias: 'chat-then-direct', targets: [target(COMPAT, 'up-chat'), target(DIRECT, 'up-direct')] },
      {
        alias: 'responses-then-chat',
        targets: [target('vendorb.responses.v1', 'up-responses'), target(COMPAT, 'up-chat2')],
      },
      {
        alias: 'nowhere',
        targets: [
          target(COMPAT, 'up-n1'),
          target('vendorh.chat.v1', 'up-n2'),
          target('vendore.generate-content.text.v1beta', 'up-n3'),
        ],
      },
    ],
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

describe('routed away vs rejected', () => {
  it('a target that cannot carry a field is routed away; the next one serves and the headers say so', async () => {
    const result = await postMessages(
      gateway.url,
      key,
      messageBody('chat-then-direct', {
        thinking: { type: 'enabled', budget_tokens: 1024 },
        max_tokens: 2048,
      }),
    );
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.headers.get('svc-route')).toBe(DIRECT);
    expect(result.headers.get('svc-route-skipped')).toBe(`${COMPAT}=thinking unsupported`);
    expect(gateway.simulator.requests({ model: 'up-chat' })).toHaveLength(0);
    expect(gateway.simulator.requests({ model: 'up-direct' })).toHaveLength(1);
  });

  it('without the field the first target serves and nothing is skipped', async () => {
    const result = await postMessages(gateway.url, key, messageBody('chat-then-direct'));
    expect(result.status).toBe(200);
    expect(result.headers.get('svc-route')).toBe(COMPAT);
    expect(result.headers.get('svc-route-skipped')).toBeNull();
    expect(result.body.model).toBe('chat-then-direct');
  });

  it('a streaming request is routed away from a profile without a stream primitive', async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(messageBody('responses-then-chat', { stream: true })),
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(response.headers.get('svc-route')).toBe(COMPAT);
    expect(response.headers.get('svc-route-skipped')).toBe('vendorb.responses.v1=no stream primitive');
    expect(gateway.simulator.requests({ model: 'up-responses' })).toHaveLength(0);
  });

  it('the only target cannot carry it: rejected with 400 no_eligible_route before any upstream byte', async () => {
    const result = await postMessages(gateway.url, key, messageBody(`m:${COMPAT}`, { top_k: 5 }));
    expectVendoraError(result, 400, 'no_eligible_route', {
      type: 'invalid_request_error',
      field: `${COMPAT}: top_k unsupported`,
    });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('no eligible target: the 400 names each target and why', async () => {
    const body = messageBody('nowhere', {
      top_k: 5,
      temperature: 0.5,
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
    });
    const result = await postMessages(gateway.url, key, body);
    expectVendoraError(result, 400, 'no_eligible_route', { field: 'nowhere' });
    const message: string = result.body.error.message;
    expect(message).toContain(`${COMPAT}: top_k unsupported`);
    expect(message).toContain('vendorh.chat.v1: top_k unsupported; temperature unsupported');
    expect(message).toContain('vendore.generate-content.text.v1beta: top_k unsupported; tools unsupported');
    expect(gateway.simulator.requests()).toHaveLength(0);
  });
});

describe('ordered fallback on retryable failures before the first byte', () => {
  for (const status of [500, 429, 503, 529]) {
    it(`upstream ${status}: the second target serves; both attempts are audited with their own outcomes`, async () => {
      gateway.simulator.setBehaviour({ status }, { model: 'up-first' });
      const run = await governance.run(1_000_000);
      const result = await postMessages(gateway.url, key, messageBody('fallback'), {
        'x-svc-run-id': run.id,
      });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      expect(result.headers.get('svc-route')).toBe(COMPAT);
      expect(result.headers.get('svc-route-skipped')).toMatch(new RegExp(`^${DIRECT}=failed: `));
      expect(gateway.simulator.requests({ model: 'up-first' })).toHaveLength(1);
      expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(1);
      const audit = await auditOfRun(gateway.store, run.id);
      expect(
        audit.map((entry) => [
          entry.connection,
          entry.upstreamModel,
          entry.state,
          entry.outcome,
          entry.httpStatus,
          entry.costMicrosUsd,
        ]),
      ).toEqual([
        [DIRECT, 'up-first', 'settled', 'refused_upstream', status, 0],
        [COMPAT, 'up-second', 'settled', 'completed', 200, audit[1]!.costMicrosUsd],
      ]);
      expect(audit[1]!.costMicrosUsd).toBeGreaterThan(0);
      expect(audit[0]!.attemptId).not.toBe(audit[1]!.attemptId);
      expect(result.headers.get('svc-attempt-id')).toBe(audit[1]!.attemptId);
      const after = await governance.getRun(run.id);
      expect(after.committed_micros_usd).toBe(audit[1]!.costMicrosUsd);
      expect(after.reserved_micros_usd).toBe(0);
    });
  }

  it('connection refused: the attempt is released (nothing reached the upstream) and the next target serves', async () => {
    const run = await governance.run(1_000_000);
    const result = await postMessages(gateway.url, key, messageBody('dead-first'), {
      'x-svc-run-id': run.id,
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.headers.get('svc-route')).toBe(DIRECT);
    expect(result.headers.get('svc-route-skipped')).toMatch(/^dead=failed: cannot connect/);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit.map((entry) => [entry.connection, entry.state, entry.outcome, entry.costMicrosUsd])).toEqual(
      [
        ['dead', 'released', 'not_sent', 0],
        [DIRECT, 'settled', 'completed', audit[1]!.costMicrosUsd],
      ],
    );
    const after = await governance.getRun(run.id);
    expect(after.unknown_attempts).toBe(0);
    expect(after.committed_micros_usd).toBe(audit[1]!.costMicrosUsd);
  });

  it('first-byte timeout: the attempt is unknown (whole reservation committed) and the next target serves', async () => {
    gateway.simulator.setBehaviour({ latencyMs: FIRST_BYTE_MS + 2700 }, { model: 'up-slow' });
    const run = await governance.run(1_000_000);
    const started = Date.now();
    const result = await postMessages(gateway.url, key, messageBody('slow-first'), {
      'x-svc-run-id': run.id,
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    // The gateway gave up on the first target long before it would have answered.
    expect(Date.now() - started).toBeLessThan(FIRST_BYTE_MS + 2200);
    expect(result.headers.get('svc-route')).toBe(COMPAT);
    expect(result.headers.get('svc-route-skipped')).toMatch(/^slow=failed: .*timed out/);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit.map((entry) => [entry.connection, entry.state, entry.outcome])).toEqual([
      ['slow', 'unknown', 'unknown'],
      [COMPAT, 'settled', 'completed'],
    ]);
    expect(audit[0]!.costMicrosUsd).toBe(audit[0]!.reservationMicrosUsd);
    const after = await governance.getRun(run.id);
    expect(after.unknown_attempts).toBe(1);
    expect(after.committed_micros_usd).toBe(audit[0]!.reservationMicrosUsd + audit[1]!.costMicrosUsd);
    expect(after.reserved_micros_usd).toBe(0);
  });

  it('a retryable failure on every target: the last error comes back', async () => {
    gateway.simulator.setBehaviour({ status: 503 }, { model: 'up-first' });
    gateway.simulator.setBehaviour({ status: 500 }, { model: 'up-second' });
    const result = await postMessages(gateway.url, key, messageBody('fallback'));
    expect(result.status).toBe(500);
    expectVendoraError(result, 500, 'upstream_error', { type: 'api_error' });
    expect(gateway.simulator.requests({ model: 'up-first' })).toHaveLength(1);
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(1);
  });

  it('a non-retryable failure (400) is not retried', async () => {
    gateway.simulator.setBehaviour({ status: 400, errorMessage: 'messages: bad' }, { model: 'up-first' });
    const run = await governance.run(1_000_000);
    const result = await postMessages(gateway.url, key, messageBody('fallback'), { 'x-svc-run-id': run.id });
    expectVendoraError(result, 400, 'upstream_error', {
      type: 'invalid_request_error',
      field: 'messages: bad',
    });
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit.map((entry) => [entry.state, entry.outcome])).toEqual([['settled', 'refused_upstream']]);
  });
});

describe('fallback and streams', () => {
  async function streamCall(body: Record<string, unknown>, runId: string) {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        'x-svc-run-id': runId,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { response, events: parseSse(text) };
  }

  it('a streaming request falls back on a 5xx before the first byte', async () => {
    gateway.simulator.setBehaviour({ status: 502 }, { model: 'up-first' });
    const run = await governance.run(1_000_000);
    const { response, events } = await streamCall(messageBody('fallback', { stream: true }), run.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('svc-route')).toBe(COMPAT);
    expect(events.map((event) => event.event).at(-1)).toBe('message_stop');
    const audit = await eventually(async () => {
      const entries = await auditOfRun(gateway.store, run.id);
      return entries.length === 2 ? entries : undefined;
    });
    expect(audit.map((entry) => [entry.connection, entry.outcome])).toEqual([
      [DIRECT, 'refused_upstream'],
      [COMPAT, 'completed'],
    ]);
  });

  it('a failure after the first byte reached the client is not retried elsewhere', async () => {
    gateway.simulator.setBehaviour({ dropAfterEvents: 3 }, { model: 'up-first' });
    const run = await governance.run(1_000_000);
    const { response, events } = await streamCall(messageBody('fallback', { stream: true }), run.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('svc-route')).toBe(DIRECT);
    expect(events.at(-1)?.event).toBe('error');
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
    const view = await eventually(async () => {
      const current = await governance.getRun(run.id);
      return current.reserved_micros_usd === 0 ? current : undefined;
    });
    expect(view.unknown_attempts).toBe(1);
  });

  it('a client that goes away before the answer: the upstream call is aborted, settled unknown, no fallback', async () => {
    gateway.simulator.setBehaviour({ latencyMs: 1500 }, { model: 'up-first' });
    const run = await governance.run(1_000_000);
    const controller = new AbortController();
    const pending = fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        'x-svc-run-id': run.id,
      },
      body: JSON.stringify(messageBody('fallback')),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await eventually(() => (gateway.simulator.requests({ model: 'up-first' }).length > 0 ? true : undefined));
    controller.abort();
    await pending;
    const view = await eventually(async () => {
      const current = await governance.getRun(run.id);
      return current.reserved_micros_usd === 0 && current.unknown_attempts === 1 ? current : undefined;
    });
    const audit = await auditOfRun(gateway.store, run.id);
    expect(audit.map((entry) => [entry.state, entry.outcome])).toEqual([['unknown', 'unknown']]);
    expect(view.committed_micros_usd).toBe(audit[0]!.reservationMicrosUsd);
    const [sent] = gateway.simulator.requests({ model: 'up-first' });
    expect(sent?.closedEarlyAt).toBeDefined();
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
  });
});
