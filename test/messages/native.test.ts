/**
 * Native mode (SPEC.md 4.2 mode rules, DESIGN "Routing, modes and the profile matrix"): the alias's
 * first target is pinned and must be vendora-wire; direct and cloudf mantle vendora forward tool and
 * content bodies verbatim; vendorg and vendorh vendora-wire reject what their rules name; no fallback.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  expectVendoraError,
  messageBody,
  PRICE,
  parseSse,
  postMessages,
  startGateway,
  withModel,
} from './support.js';

const NATIVE = { 'svc-route-mode': 'native' };

let gateway: SimulatedGateway;
let key: string;

beforeAll(async () => {
  gateway = await startGateway({
    models: [
      {
        alias: 'chat-first',
        targets: [
          { connection: 'compat.chat-embeddings.v1', model: 'up-chat-first', price: PRICE },
          { connection: 'vendora.messages.2023-06-01', model: 'up-direct-second', price: PRICE },
        ],
      },
    ],
  });
  key = await gateway.key();
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

/** A request only native mode can carry: cache_control everywhere, per-tool configuration, signed thinking, output_config. */
function richBody(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model,
    max_tokens: 2048,
    system: [{ type: 'text', text: 'You are careful.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: 'List the files', cache_control: { type: 'ephemeral' } }],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should run ls.', signature: 'RXVnZW5l' },
          { type: 'tool_use', id: 'toolu_01', name: 'bash', input: { command: 'ls' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [{ type: 'text', text: 'a.txt b.txt' }],
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ],
    tools: [
      { type: 'bash_20250124', name: 'bash', cache_control: { type: 'ephemeral' } },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 10_000 },
      {
        type: 'computer_20250124',
        name: 'computer',
        display_width_px: 1024,
        display_height_px: 768,
        display_number: 1,
      },
      {
        name: 'lookup',
        description: 'Look up',
        input_schema: { type: 'object', properties: { q: { type: 'string' } } },
        strict: true,
        input_examples: [{ q: 'x' }],
      },
    ],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    thinking: { type: 'enabled', budget_tokens: 1024 },
    output_config: { effort: 'high' },
    metadata: { user_id: 'u-1' },
    ...extra,
  };
}

describe('native mode pins the first target', () => {
  it('an alias whose first target is not vendora-wire is refused with 400, even when a later target is', async () => {
    for (const alias of [
      'chat-first',
      'm:compat.chat-embeddings.v1',
      'm:vendorb.responses.v1',
      'm:vendore.generate-content.text.v1beta',
    ]) {
      const result = await postMessages(gateway.url, key, messageBody(alias), NATIVE);
      expectVendoraError(result, 400, 'unsupported_field', {
        type: 'invalid_request_error',
        field: 'Svc-Route-Mode',
      });
      expect(result.body.error.message).toContain('vendora-wire');
    }
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('the same alias in portable mode routes to its first eligible target', async () => {
    const result = await postMessages(gateway.url, key, messageBody('chat-first'));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.headers.get('svc-route')).toBe('compat.chat-embeddings.v1');
  });

  for (const profile of [
    'vendora.messages.2023-06-01',
    'cloudf.mantle.vendora.messages.v1',
    'vendorg.vendora.messages.v1',
    'vendorh.vendora.messages.v1',
  ]) {
    it(`${profile} can be pinned natively`, async () => {
      const result = await postMessages(gateway.url, key, messageBody(`m:${profile}`), NATIVE);
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      expect(result.headers.get('svc-route')).toBe(profile);
      expect(result.body.model).toBe(`m:${profile}`);
      expect(gateway.simulator.requests({ model: `up-${profile}` })).toHaveLength(1);
    });
  }
});

describe('verbatim forwarding on direct and cloudf mantle vendora', () => {
  for (const profile of ['vendora.messages.2023-06-01', 'cloudf.mantle.vendora.messages.v1']) {
    it(`${profile}: tools, blocks, cache_control and output_config reach the upstream unchanged`, async () => {
      const body = richBody(`m:${profile}`, {
        output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
      });
      const result = await postMessages(gateway.url, key, body, NATIVE);
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      const sent = gateway.simulator.requests({ model: `up-${profile}` });
      expect(sent).toHaveLength(1);
      expect(sent[0]!.body).toEqual(withModel(body, `up-${profile}`));
      expect(Object.keys(sent[0]!.body as object)).toEqual(Object.keys(body));
      expect(sent[0]!.path).toBe(profile.startsWith('cloudf') ? '/mantle/v1/messages' : '/v1/messages');
      expect(sent[0]!.headers['vendora-version']).toBe('2023-06-01');
    });
  }

  it('native blocks the canonical model cannot carry (server tool replay, mid-conversation system turn) are forwarded', async () => {
    const body = messageBody('m:vendora.messages.2023-06-01', {
      messages: [
        { role: 'user', content: 'Search' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'Found nothing' },
          ],
        },
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Ok' },
      ],
    });
    const result = await postMessages(gateway.url, key, body, NATIVE);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(gateway.simulator.requests({ model: 'up-vendora.messages.2023-06-01' })[0]?.body).toEqual(
      withModel(body, 'up-vendora.messages.2023-06-01'),
    );
  });

  it('a streaming native call forwards the body verbatim and passes the events through', async () => {
    const body = richBody('m:vendora.messages.2023-06-01', { stream: true });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        ...NATIVE,
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const events = parseSse(await response.text());
    expect(events.map((event) => event.event)).toContain('message_stop');
    expect(events[0]!.data.message.model).toBe('m:vendora.messages.2023-06-01');
    expect(gateway.simulator.requests({ model: 'up-vendora.messages.2023-06-01' })[0]?.body).toEqual(
      withModel(body, 'up-vendora.messages.2023-06-01'),
    );
  });
});

describe('guarded vendora-wire profiles in native mode', () => {
  const VENDORG = 'vendorg.vendora.messages.v1';
  const VENDORH = 'vendorh.vendora.messages.v1';
  const cacheControl = {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
    ],
  };

  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    [VENDORG, 'top_k', { top_k: 5 }, 'top_k'],
    [VENDORG, 'stop_sequences', { stop_sequences: ['END'] }, 'stop_sequences'],
    [VENDORG, 'cache_control', cacheControl, 'cache_control'],
    [
      VENDORG,
      'a video block',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'video', source: { type: 'url', url: 'https://example.com/v.mp4' } }],
          },
        ],
      },
      'video',
    ],
    [
      VENDORG,
      'a mid-conversation system turn',
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'Ok' },
        ],
      },
      'system turn',
    ],
    [VENDORH, 'temperature', { temperature: 0.2 }, 'temperature'],
    [VENDORH, 'top_p', { top_p: 0.9 }, 'top_p'],
    [VENDORH, 'top_k', { top_k: 5 }, 'top_k'],
    [VENDORH, 'cache_control', cacheControl, 'cache_control'],
  ];
  for (const [profile, label, patch, named] of cases) {
    it(`${profile} rejects ${label} before any upstream byte`, async () => {
      const result = await postMessages(gateway.url, key, messageBody(`m:${profile}`, patch), NATIVE);
      expectVendoraError(result, 400, 'unsupported_field', { type: 'invalid_request_error', field: named });
      expect(result.body.error.message).toContain(profile);
      expect(gateway.simulator.requests({ model: `up-${profile}` })).toHaveLength(0);
    });
  }

  it('vendorg vendora-wire carries what its rules do not name (temperature, top_p, tools) verbatim', async () => {
    const body = messageBody(`m:${VENDORG}`, {
      temperature: 0.3,
      top_p: 0.8,
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
    });
    const result = await postMessages(gateway.url, key, body, NATIVE);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(gateway.simulator.requests({ model: `up-${VENDORG}` })[0]?.body).toEqual(
      withModel(body, `up-${VENDORG}`),
    );
  });

  it('vendorh vendora-wire carries stop_sequences and output_config.effort natively', async () => {
    const body = messageBody(`m:${VENDORH}`, { stop_sequences: ['END'], output_config: { effort: 'low' } });
    const result = await postMessages(gateway.url, key, body, NATIVE);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(gateway.simulator.requests({ model: `up-${VENDORH}` })[0]?.body).toEqual(
      withModel(body, `up-${VENDORH}`),
    );
  });

  it('vendorh vendora-wire routes output_config.effort away in portable mode (no other target: 400)', async () => {
    const result = await postMessages(
      gateway.url,
      key,
      messageBody(`m:${VENDORH}`, { output_config: { effort: 'low' } }),
    );
    expectVendoraError(result, 400, 'no_eligible_route', { field: 'output_config.effort' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });
});

describe('no fallback in native mode', () => {
  it('a 500 from the pinned target is the answer; the second target is never called', async () => {
    gateway.simulator.setBehaviour({ status: 500, errorMessage: 'upstream exploded' }, { model: 'up-first' });
    const result = await postMessages(gateway.url, key, messageBody('fallback'), NATIVE);
    expectVendoraError(result, 500, 'upstream_error', { type: 'api_error' });
    expect(result.body.error.message).toContain('upstream exploded');
    expect(gateway.simulator.requests({ model: 'up-first' })).toHaveLength(1);
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
  });

  it('a 429 from the pinned target is the answer too (with retry-after)', async () => {
    gateway.simulator.setBehaviour({ status: 429, retryAfter: '7' }, { model: 'up-first' });
    const result = await postMessages(gateway.url, key, messageBody('fallback'), NATIVE);
    expectVendoraError(result, 429, 'upstream_error', { type: 'rate_limit_error' });
    expect(result.headers.get('retry-after')).toBe('7');
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
  });

  it('a refused connection on the pinned target is not retried elsewhere', async () => {
    gateway.simulator.setBehaviour({ dropBeforeResponse: true }, { model: 'up-first' });
    const result = await postMessages(gateway.url, key, messageBody('fallback'), NATIVE);
    expect(result.status).toBeGreaterThanOrEqual(500);
    expect(result.body.type).toBe('error');
    expect(gateway.simulator.requests({ model: 'up-second' })).toHaveLength(0);
  });
});
