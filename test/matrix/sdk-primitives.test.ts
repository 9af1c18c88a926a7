/**
 * End to end with the official vendora SDK, one primitive behind the gateway at a time: the SDK
 * talks to /v1/messages, the gateway translates to the profile's wire, the simulator answers.
 * Covers text, a tool-use round trip, streaming tool use with interleaved calls, the responses and
 * generate-content primitives streaming and not, usage arithmetic (cached tokens split out, thinking
 * billed as output) checked against the audit entry's cost, and a mid-stream drop.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/store/port.js';
import {
  type SimulatedGateway as MatrixGateway,
  messagesHeaders,
  PRICE,
  startSimulatedGateway as startMatrixGateway,
} from '../support/simulated-gateway.js';

const CHAT = 'compat.chat-embeddings.v1';
const RESPONSES = 'vendorb.responses.v1';
const MANTLE_RESPONSES = 'cloudf.mantle.responses.v1';
const GENERATE_CONTENT = 'vendore.generate-content.text.v1beta';
const MESSAGES = 'vendora.messages.2023-06-01';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};
const TIME_TOOL = {
  name: 'get_time',
  description: 'Local time in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

let gateway: MatrixGateway;
let client: Anthropic;
let key: string;

beforeAll(async () => {
  gateway = await startMatrixGateway();
  key = await gateway.key();
  client = new Anthropic({
    baseURL: gateway.url,
    apiKey: key,
    maxRetries: 0,
    defaultHeaders: { 'vendora-version': '2023-06-01' },
  });
});
afterAll(async () => {
  await gateway?.close();
});
afterEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

const model = (profile: string) => `m:${profile}`;
const upstream = (profile: string) => `up-${profile}`;
const ask = (text: string) => [{ role: 'user' as const, content: text }];

/** Micro-USD at the test PRICE, rounded up as the ledger does (written out, not imported). */
function expectedCost(usage: {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}): number {
  const tokens =
    usage.input * PRICE.input_per_mtok_micros +
    (usage.cacheWrite ?? 0) * PRICE.cache_write_per_mtok_micros +
    (usage.cacheRead ?? 0) * PRICE.cache_read_per_mtok_micros +
    usage.output * PRICE.output_per_mtok_micros;
  return PRICE.request_fee_micros + Math.ceil(tokens / 1_000_000);
}

async function auditEntry(attemptId: string | null): Promise<AuditEntry> {
  expect(attemptId).toMatch(/^att_/);
  // Streams settle as the generator finishes, just after the last byte; poll briefly.
  for (let tries = 0; tries < 50; tries++) {
    const entries = await gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
    const entry = entries.find((candidate) => candidate.attemptId === attemptId);
    if (entry !== undefined && entry.state !== 'reserved') return entry;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no settled audit entry for ${attemptId}`);
}

function lastRecorded(profile: string): any {
  const recorded = gateway.simulator.requests({ model: upstream(profile) });
  expect(recorded.length).toBeGreaterThan(0);
  return recorded.at(-1)!.body;
}

describe('chat-completions behind the gateway (compat.chat-embeddings.v1)', () => {
  it('text', async () => {
    gateway.simulator.setBehaviour({ text: 'Bonjour from chat.' }, { model: upstream(CHAT), times: 1 });
    const message = await client.messages.create({
      model: model(CHAT),
      max_tokens: 100,
      messages: ask('Say hello'),
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Bonjour from chat.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.model).toBe(model(CHAT));
    expect(lastRecorded(CHAT)).toMatchObject({
      model: upstream(CHAT),
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });

  it('tool use round trip: the tool_result goes back as a tool message with the same id', async () => {
    gateway.simulator.setBehaviour(
      { toolCalls: [{ id: 'call_weather_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { model: upstream(CHAT), times: 1 },
    );
    const first = await client.messages.create({
      model: model(CHAT),
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      messages: ask('Weather in Paris?'),
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({
      type: 'tool_use',
      id: 'call_weather_1',
      name: 'get_weather',
      input: { city: 'Paris' },
    });

    const second = await client.messages.create({
      model: model(CHAT),
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      messages: [
        ...ask('Weather in Paris?'),
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'call_weather_1', content: '18C and sunny' }],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    const wire = lastRecorded(CHAT);
    const assistant = wire.messages.find((message: any) => message.role === 'assistant');
    expect(assistant.tool_calls).toEqual([
      {
        id: 'call_weather_1',
        type: 'function',
        function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) },
      },
    ]);
    expect(wire.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_weather_1',
      content: '18C and sunny',
    });
  });

  it('streaming tool use: two interleaved calls arrive as consistent blocks with parsed input', async () => {
    gateway.simulator.setBehaviour(
      {
        text: 'Let me check both.',
        toolCalls: [
          { id: 'call_w', name: 'get_weather', input: { city: 'Paris', units: 'metric' } },
          { id: 'call_t', name: 'get_time', input: { city: 'Tokyo' } },
        ],
      },
      { model: upstream(CHAT), times: 1 },
    );
    const stream = client.messages.stream({
      model: model(CHAT),
      max_tokens: 300,
      tools: [WEATHER_TOOL, TIME_TOOL],
      messages: ask('Paris weather, Tokyo time'),
    });
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();

    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'text', text: 'Let me check both.' },
      { type: 'tool_use', id: 'call_w', name: 'get_weather', input: { city: 'Paris', units: 'metric' } },
      { type: 'tool_use', id: 'call_t', name: 'get_time', input: { city: 'Tokyo' } },
    ]);

    // Block indices: started 0..n-1 in order, deltas only inside an open block, each stopped once.
    const open = new Set<number>();
    const started: number[] = [];
    const stopped: number[] = [];
    const jsonDeltas = new Map<number, number>();
    for (const event of events) {
      if (event.type === 'content_block_start') {
        // The vendora stream protocol has at most one block open at a time.
        expect(open.size, `block ${event.index} starts while ${[...open]} is open`).toBe(0);
        expect(event.index).toBe(started.length);
        started.push(event.index);
        open.add(event.index);
      } else if (event.type === 'content_block_delta') {
        expect(open.has(event.index), `delta for block ${event.index} outside start/stop`).toBe(true);
        if (event.delta.type === 'input_json_delta')
          jsonDeltas.set(event.index, (jsonDeltas.get(event.index) ?? 0) + 1);
      } else if (event.type === 'content_block_stop') {
        expect(open.delete(event.index)).toBe(true);
        stopped.push(event.index);
      }
    }
    expect(started).toEqual([0, 1, 2]);
    expect([...stopped].sort()).toEqual([0, 1, 2]);
    expect(open.size).toBe(0);
    // The upstream interleaved the two calls' argument fragments; the first call streams live, the
    // second may arrive buffered (one delta) once the first closed.
    expect(jsonDeltas.get(1)).toBeGreaterThan(1);
    expect(jsonDeltas.get(2)).toBeGreaterThanOrEqual(1);
    const wireCalls = gateway.simulator.requests({ model: upstream(CHAT) }).at(-1)!.body as any;
    expect(wireCalls.tools.map((tool: any) => tool.function.name)).toEqual(['get_weather', 'get_time']);
    expect(events.at(-1)?.type).toBe('message_stop');
  });

  it('an upstream that drops mid-stream ends the client SSE with an error event, and the attempt is unknown', async () => {
    gateway.simulator.setBehaviour(
      { text: 'one two three four five six', deltas: 6, dropAfterEvents: 3 },
      { model: upstream(CHAT), times: 1 },
    );
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: messagesHeaders(key),
      body: JSON.stringify({ model: model(CHAT), max_tokens: 100, stream: true, messages: ask('Count') }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const frames = text.trim().split(/\n\n+/);
    const last = frames.at(-1)!;
    expect(last).toMatch(/^event: error\n/);
    const data = JSON.parse(
      last
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    );
    expect(data).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(text).toContain('event: content_block_delta');
    expect(text).not.toContain('event: message_stop');
    const entry = await auditEntry(response.headers.get('svc-attempt-id'));
    expect(entry.state).toBe('unknown');
    expect(entry.costMicrosUsd).toBe(entry.reservationMicrosUsd);

    // And the SDK surfaces it as an error rather than a silently short message.
    gateway.simulator.setBehaviour(
      { text: 'one two three four', deltas: 4, dropAfterEvents: 2 },
      { model: upstream(CHAT), times: 1 },
    );
    const stream = client.messages.stream({ model: model(CHAT), max_tokens: 100, messages: ask('Count') });
    await expect(stream.finalMessage()).rejects.toThrow();
  });
});

describe('responses behind the gateway', () => {
  it(`${RESPONSES}: non-streaming text`, async () => {
    gateway.simulator.setBehaviour(
      { text: 'Hello from responses.' },
      { model: upstream(RESPONSES), times: 1 },
    );
    const message = await client.messages.create({
      model: model(RESPONSES),
      max_tokens: 90,
      system: 'Be brief.',
      messages: ask('Hi'),
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from responses.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(lastRecorded(RESPONSES)).toMatchObject({
      max_output_tokens: 90,
      instructions: 'Be brief.',
      store: false,
    });
  });

  it(`${RESPONSES}: streaming is routed away (no stream primitive), nothing reaches the upstream`, async () => {
    await expect(
      client.messages.create({ model: model(RESPONSES), max_tokens: 90, stream: true, messages: ask('Hi') }),
    ).rejects.toMatchObject({
      status: 400,
    });
    expect(gateway.simulator.requests({ model: upstream(RESPONSES) })).toHaveLength(0);
  });

  it(`${MANTLE_RESPONSES}: streaming text`, async () => {
    gateway.simulator.setBehaviour(
      { text: 'Streaming from mantle responses.', deltas: 5 },
      { model: upstream(MANTLE_RESPONSES), times: 1 },
    );
    const stream = client.messages.stream({
      model: model(MANTLE_RESPONSES),
      max_tokens: 90,
      messages: ask('Hi'),
    });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Streaming from mantle responses.' }]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Streaming from mantle responses.');
    expect(final.stop_reason).toBe('end_turn');
    const wire = gateway.simulator.requests({ model: upstream(MANTLE_RESPONSES) }).at(-1)!;
    expect(wire.path).toBe('/mantle/v1/responses');
    expect(wire.body).toMatchObject({ stream: true, store: false, max_output_tokens: 90 });
  });
});

describe('generate-content behind the gateway (vendore)', () => {
  it('non-streaming text', async () => {
    gateway.simulator.setBehaviour(
      { text: 'Hello from generate-content.' },
      { model: upstream(GENERATE_CONTENT), times: 1 },
    );
    const message = await client.messages.create({
      model: model(GENERATE_CONTENT),
      max_tokens: 80,
      messages: ask('Hi'),
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from generate-content.' }]);
    const wire = gateway.simulator.requests({ model: upstream(GENERATE_CONTENT) }).at(-1)!;
    expect(wire.path).toMatch(/:generateContent$/);
    expect(wire.body).toMatchObject({
      generationConfig: { maxOutputTokens: 80, thinkingConfig: { thinkingBudget: 0 } },
    });
  });

  it('streaming text', async () => {
    gateway.simulator.setBehaviour(
      { text: 'Streamed by generate-content.', deltas: 3 },
      { model: upstream(GENERATE_CONTENT), times: 1 },
    );
    const stream = client.messages.stream({
      model: model(GENERATE_CONTENT),
      max_tokens: 80,
      messages: ask('Hi'),
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Streamed by generate-content.' }]);
    expect(final.stop_reason).toBe('end_turn');
    const wire = gateway.simulator.requests({ model: upstream(GENERATE_CONTENT) }).at(-1)!;
    expect(wire.path).toMatch(/:streamGenerateContent$/);
  });

  it('thinking tokens are billed as output', async () => {
    gateway.simulator.setBehaviour(
      { text: 'Thought hard.', usage: { input_tokens: 50, output_tokens: 10, thinking_tokens: 200 } },
      { model: upstream(GENERATE_CONTENT), times: 1 },
    );
    const { data, response } = await client.messages
      .create({ model: model(GENERATE_CONTENT), max_tokens: 500, messages: ask('Think') })
      .withResponse();
    expect(data.usage).toMatchObject({ input_tokens: 50, output_tokens: 210, cache_read_input_tokens: 0 });
    const entry = await auditEntry(response.headers.get('svc-attempt-id'));
    expect(entry.state).toBe('settled');
    expect(entry.usage).toEqual({
      inputTokens: 50,
      outputTokens: 210,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
    expect(entry.costMicrosUsd).toBe(expectedCost({ input: 50, output: 210 }));
    expect(entry.costMicrosUsd).toBe(3300);
  });
});

describe('usage arithmetic: cached tokens split out and settled at cache prices', () => {
  const usage = { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 2000 };
  // 120 x 3 + 2000 x 0.3 + 30 x 15 = 360 + 600 + 450 micro-USD.
  const cost = expectedCost({ input: 120, output: 30, cacheRead: 2000 });

  it.each([CHAT, RESPONSES, GENERATE_CONTENT, MESSAGES])('%s, non-streaming', async (profile) => {
    gateway.simulator.setBehaviour({ text: 'Cached answer.', usage }, { model: upstream(profile), times: 1 });
    const { data, response } = await client.messages
      .create({ model: model(profile), max_tokens: 100, messages: ask('Again') })
      .withResponse();
    expect(data.usage).toMatchObject({
      input_tokens: 120,
      output_tokens: 30,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 0,
    });
    const entry = await auditEntry(response.headers.get('svc-attempt-id'));
    expect(entry.profile).toBe(profile);
    expect(entry.state).toBe('settled');
    expect(entry.usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 2000,
    });
    expect(cost).toBe(1410);
    expect(entry.costMicrosUsd).toBe(cost);
    expect(entry.reservationMicrosUsd).toBeGreaterThanOrEqual(entry.costMicrosUsd);
    expect(entry.overran).toBe(false);
  });

  it.each([CHAT, MANTLE_RESPONSES, GENERATE_CONTENT])('%s, streaming', async (profile) => {
    gateway.simulator.setBehaviour({ text: 'Cached stream.', usage }, { model: upstream(profile), times: 1 });
    const stream = client.messages.stream({ model: model(profile), max_tokens: 100, messages: ask('Again') });
    const final = await stream.finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: 120,
      output_tokens: 30,
      cache_read_input_tokens: 2000,
    });
    const { response } = await stream.withResponse();
    const entry = await auditEntry(response.headers.get('svc-attempt-id'));
    expect(entry.state).toBe('settled');
    expect(entry.costMicrosUsd).toBe(cost);
  });
});
