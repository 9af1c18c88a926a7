/**
 * POST /v1/messages/count_tokens (SPEC.md 4.3): served natively by the direct vendora profile only,
 * body forwarded verbatim with only the model replaced, rejections before any upstream byte, and a
 * ledger attempt plus audit entry charging only the fixed per-request fee.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  expectVendoraError,
  Governance,
  PRICE,
  postCountTokens,
  startGateway,
  withModel,
} from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';
const DIRECT_UPSTREAM = 'up-vendora.messages.2023-06-01';
const FEE = 1234;

let gateway: SimulatedGateway;
let key: string;
let governance: Governance;

beforeAll(async () => {
  gateway = await startGateway({
    models: [
      {
        alias: 'with-fee',
        targets: [
          {
            connection: 'vendora.messages.2023-06-01',
            model: 'up-fee',
            price: { ...PRICE, request_fee_micros: FEE },
          },
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

const countBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'How many tokens is this?' }],
  ...extra,
});

describe('count_tokens rejections (before any upstream byte)', () => {
  it('stream is refused', async () => {
    const result = await postCountTokens(gateway.url, key, countBody(DIRECT, { stream: true }));
    expectVendoraError(result, 400, 'unsupported_field', { type: 'invalid_request_error', field: 'stream' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('Svc-Route-Mode: portable is refused (native and absent are served)', async () => {
    const portable = await postCountTokens(gateway.url, key, countBody(DIRECT), {
      'svc-route-mode': 'portable',
    });
    expectVendoraError(portable, 400, 'unsupported_field', { field: 'Svc-Route-Mode' });
    expect(gateway.simulator.requests()).toHaveLength(0);
    const native = await postCountTokens(gateway.url, key, countBody(DIRECT), { 'svc-route-mode': 'native' });
    expect(native.status, JSON.stringify(native.body)).toBe(200);
    const absent = await postCountTokens(gateway.url, key, countBody(DIRECT));
    expect(absent.status).toBe(200);
  });

  for (const field of ['max_tokens', 'temperature', 'metadata', 'frobnicate']) {
    it(`unknown top-level field ${field} is refused`, async () => {
      const result = await postCountTokens(
        gateway.url,
        key,
        countBody(DIRECT, { [field]: field === 'metadata' ? {} : 1 }),
      );
      expectVendoraError(result, 400, 'invalid_request', { field });
      expect(gateway.simulator.requests()).toHaveLength(0);
    });
  }

  it('mcp_servers is a boundary here too', async () => {
    const result = await postCountTokens(gateway.url, key, countBody(DIRECT, { mcp_servers: [] }));
    expectVendoraError(result, 400, 'unsupported_field', { field: 'mcp_servers' });
  });

  it('vendora-version other than 2023-06-01 is refused', async () => {
    const result = await postCountTokens(gateway.url, key, countBody(DIRECT), {
      'vendora-version': '2023-01-01',
    });
    expectVendoraError(result, 400, 'invalid_request', { field: 'vendora-version' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  for (const profile of [
    'cloudf.mantle.vendora.messages.v1',
    'vendorg.vendora.messages.v1',
    'vendorh.vendora.messages.v1',
    'compat.chat-embeddings.v1',
  ]) {
    it(`is served only by the direct vendora profile: m:${profile} answers 400`, async () => {
      const result = await postCountTokens(gateway.url, key, countBody(`m:${profile}`));
      expectVendoraError(result, 400, 'no_eligible_route', {
        type: 'invalid_request_error',
        field: 'direct vendora',
      });
      expect(gateway.simulator.requests()).toHaveLength(0);
    });
  }

  it('an unknown model alias: 404 not_found_error', async () => {
    const result = await postCountTokens(gateway.url, key, countBody('no-such-model'));
    expectVendoraError(result, 404, 'model_not_found', { type: 'not_found_error', field: 'no-such-model' });
  });
});

describe('count_tokens forwarding', () => {
  it('forwards the body verbatim with only the model replaced, and answers the upstream count', async () => {
    gateway.simulator.setBehaviour({ usage: { input_tokens: 4321 } }, { model: DIRECT_UPSTREAM });
    const body = {
      model: DIRECT,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Use the tool', cache_control: { type: 'ephemeral' } }],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'ok', signature: 'c2ln' },
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
      ],
      tools: [
        { type: 'bash_20250124', name: 'bash' },
        {
          name: 'lookup',
          input_schema: { type: 'object' },
          strict: true,
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
    };
    const result = await postCountTokens(gateway.url, key, body);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({ input_tokens: 4321 });
    const sent = gateway.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/v1/messages/count_tokens');
    expect(sent[0]!.body).toEqual(withModel(body, DIRECT_UPSTREAM));
    expect(Object.keys(sent[0]!.body as object)).toEqual(Object.keys(body));
    expect(JSON.stringify(sent[0]!.headers)).not.toContain(key.slice(3));
    expect(result.headers.get('svc-route')).toBe('vendora.messages.2023-06-01');
  });

  it('an alias whose direct vendora target is not first is served by that target (fallback alias)', async () => {
    const result = await postCountTokens(gateway.url, key, countBody('fallback'));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(gateway.simulator.requests({ model: 'up-first' })).toHaveLength(1);
  });

  it('forwards a vendora-beta token the connection accepts and refuses others', async () => {
    const accepted = await postCountTokens(gateway.url, key, countBody(DIRECT), {
      'vendora-beta': 'interleaved-thinking-2025-05-14',
    });
    expect(accepted.status).toBe(200);
    expect(gateway.simulator.requests({ model: DIRECT_UPSTREAM })[0]?.headers['vendora-beta']).toBe(
      'interleaved-thinking-2025-05-14',
    );
    gateway.simulator.clearRequests();
    const refused = await postCountTokens(gateway.url, key, countBody(DIRECT), {
      'vendora-beta': 'files-api-2025-04-14',
    });
    expectVendoraError(refused, 400, 'unsupported_field', { field: 'vendora-beta' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });
});

describe('count_tokens ledger', () => {
  it('charges the configured fixed fee to the Run and writes an audit entry', async () => {
    const run = await governance.run(1_000_000);
    const result = await postCountTokens(gateway.url, key, countBody('with-fee'), { 'x-svc-run-id': run.id });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const after = await governance.getRun(run.id);
    expect(after.committed_micros_usd).toBe(FEE);
    expect(after.reserved_micros_usd).toBe(0);
    expect(after.unknown_attempts).toBe(0);
    expect(after.remaining_micros_usd).toBe(1_000_000 - FEE);
    const audit = await gateway.store.listAudit({ runId: run.id, limit: 100 });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      endpoint: '/v1/messages/count_tokens',
      alias: 'with-fee',
      connection: 'vendora.messages.2023-06-01',
      upstreamModel: 'up-fee',
      state: 'settled',
      reservationMicrosUsd: FEE,
      costMicrosUsd: FEE,
      httpStatus: 200,
      overran: false,
    });
    expect(result.headers.get('svc-attempt-id')).toBe(audit[0]!.attemptId);
  });

  it('per-token prices settle to zero: no fee, nothing committed, still audited', async () => {
    const run = await governance.run(1_000_000);
    const result = await postCountTokens(gateway.url, key, countBody(DIRECT), { 'x-svc-run-id': run.id });
    expect(result.status).toBe(200);
    const after = await governance.getRun(run.id);
    expect(after.committed_micros_usd).toBe(0);
    expect(after.reserved_micros_usd).toBe(0);
    const audit = await gateway.store.listAudit({ runId: run.id, limit: 100 });
    expect(audit.map((entry) => [entry.endpoint, entry.state, entry.costMicrosUsd])).toEqual([
      ['/v1/messages/count_tokens', 'settled', 0],
    ]);
  });

  it('a fee that does not fit the Run: 403 run_budget_exceeded and nothing sent', async () => {
    const run = await governance.run(FEE - 1);
    const result = await postCountTokens(gateway.url, key, countBody('with-fee'), { 'x-svc-run-id': run.id });
    expectVendoraError(result, 403, 'run_budget_exceeded', { type: 'permission_error' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('an upstream error settles at zero and comes back in the vendora dialect', async () => {
    gateway.simulator.setBehaviour({ status: 529 }, { model: 'up-fee' });
    const run = await governance.run(1_000_000);
    const result = await postCountTokens(gateway.url, key, countBody('with-fee'), { 'x-svc-run-id': run.id });
    expect(result.status).toBe(529);
    expect(result.body.type).toBe('error');
    expect(result.body.error.type).toBe('overloaded_error');
    const after = await governance.getRun(run.id);
    expect(after.committed_micros_usd).toBe(0);
    expect(after.reserved_micros_usd).toBe(0);
  });
});
