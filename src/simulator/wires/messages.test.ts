import { describe, expect, it } from 'vitest';
import { readSse } from '../../primitives/shared/sse.js';
import type { SseEvent } from '../../primitives/shared/types.js';
import { readEventNames, useSimulator } from '../test-support.js';
import { messagesWire } from './messages.js';
import { countTokens, split } from './messages-answer.js';

/** The loose shape these tests read from bodies and event data. */
interface Loose {
  content: Array<{ id: string }>;
  stop_reason: string;
  stop_sequence: string | null;
  usage: Record<string, number>;
  message: { usage: Record<string, number> };
  content_block: { id: string };
  delta: { type: string; text: string; partial_json: string };
}

const sim = useSimulator({ wires: [messagesWire] });

const REQUEST = {
  model: 'vendora-test-1',
  max_tokens: 100,
  system: 'Be brief.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris today?' }] }],
};

function post(body: unknown, path = '/v1/messages'): Promise<Response> {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'vendora-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

async function stream(
  body: unknown,
): Promise<{ response: Response; events: Array<{ event?: string; data: unknown }> }> {
  const response = await post({ ...(body as object), stream: true });
  const events: Array<{ event?: string; data: unknown }> = [];
  for await (const event of readSse(response.body!) as AsyncGenerator<SseEvent>) {
    events.push({ event: event.event, data: JSON.parse(event.data) });
  }
  return { response, events };
}

describe('messages wire: non-streaming', () => {
  it('answers a faithful message with the request model and usage', async () => {
    const response = await post(REQUEST);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'vendora-test-1',
      content: [{ type: 'text', text: 'Hello from the simulator.', citations: null }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        // "Be brief." (9) + the question (35) = 44 bytes -> 11 tokens; 4 words out.
        input_tokens: 11,
        output_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    expect(body.id).toMatch(/^msg_01[0-9A-Z]{22}$/);
  });

  it('answers text then tool calls with toolu_ ids, and reports the given usage verbatim', async () => {
    sim.setBehaviour({
      text: 'Let me check.',
      toolCalls: [
        { name: 'get_weather', input: { city: 'Paris' } },
        { id: 'toolu_fixed', name: 'noop', input: {} },
      ],
      usage: {
        input_tokens: 7,
        output_tokens: 9,
        cache_read_input_tokens: 3,
        cache_creation_input_tokens: 2,
      },
    });
    const body = (await (await post(REQUEST)).json()) as Loose;
    expect(body.content).toHaveLength(3);
    expect(body.content[1]).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: { city: 'Paris' },
    });
    expect(body.content[1]!.id).toMatch(/^toolu_/);
    expect(body.content[2]!.id).toBe('toolu_fixed');
    expect(body.stop_reason).toBe('tool_use');
    expect(body.usage).toMatchObject({
      input_tokens: 7,
      output_tokens: 9,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 2,
    });
  });

  it('reports stop_sequence and caps default output at max_tokens', async () => {
    sim.setBehaviour({ stopReason: 'stop_sequence', text: 'one two three four five' });
    const body = (await (await post({ ...REQUEST, max_tokens: 2, stop_sequences: ['END'] })).json()) as Loose;
    expect(body.stop_reason).toBe('stop_sequence');
    expect(body.stop_sequence).toBe('END');
    expect(body.usage.output_tokens).toBe(2);
  });

  it('accepts any path prefix', async () => {
    const response = await post(REQUEST, '/vendora-mantle/v1/messages');
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(sim.requests()[0]).toMatchObject({ wire: 'messages', path: '/vendora-mantle/v1/messages' });
  });

  it('answers the error envelope with the behaviour status and retry-after', async () => {
    sim.setBehaviour({ status: 429, retryAfter: '7', errorMessage: 'slow down' }, { times: 1 });
    const response = await post(REQUEST);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    const body = await response.json();
    expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    sim.setBehaviour({ status: 529 }, { times: 1 });
    const overloaded = await post({ ...REQUEST, stream: true });
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toMatchObject({ error: { type: 'overloaded_error' } });
  });

  it('rejects a body without max_tokens like the real wire', async () => {
    const response = await post({ model: 'm', messages: [] });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: /max_tokens/ },
    });
  });
});

describe('messages wire: streaming', () => {
  it('sends the documented event sequence with text deltas and cumulative usage', async () => {
    sim.setBehaviour({ text: 'abcdefgh', deltas: 3 });
    const { response, events } = await stream(REQUEST);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(events.map((e) => e.event)).toEqual([
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
    for (const event of events) expect((event.data as { type: string }).type).toBe(event.event);
    const start = events[0]!.data as Loose;
    expect(start.message).toMatchObject({ model: 'vendora-test-1', content: [], stop_reason: null });
    expect(start.message.usage.input_tokens).toBe(11);
    const texts = events.slice(3, 6).map((e) => (e.data as Loose).delta.text);
    expect(texts.join('')).toBe('abcdefgh');
    expect(events[7]!.data).toMatchObject({
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {
        output_tokens: 1,
        input_tokens: 11,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  });

  it('streams tool_use blocks as several input_json_delta fragments', async () => {
    sim.setBehaviour({ toolCalls: [{ name: 'get_weather', input: { city: 'Paris', units: 'metric' } }] });
    const { events } = await stream(REQUEST);
    const start = events.find((e) => e.event === 'content_block_start')!.data as Loose;
    expect(start).toMatchObject({
      index: 0,
      content_block: { type: 'tool_use', name: 'get_weather', input: {} },
    });
    expect(start.content_block.id).toMatch(/^toolu_/);
    const fragments = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (e.data as Loose).delta)
      .map((delta) => {
        expect(delta.type).toBe('input_json_delta');
        return delta.partial_json as string;
      });
    expect(fragments.length).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(fragments.join(''))).toEqual({ city: 'Paris', units: 'metric' });
    expect(events.find((e) => e.event === 'message_delta')!.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
    });
  });

  it('sends tool JSON that does not parse with invalidToolJson', async () => {
    sim.setBehaviour({ toolCalls: [{ name: 't', input: { a: 1 } }], invalidToolJson: true });
    const { events } = await stream(REQUEST);
    const json = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (e.data as Loose).delta.partial_json)
      .join('');
    expect(() => JSON.parse(json)).toThrow();
  });

  it('ends without message_delta and message_stop with omitFinish', async () => {
    sim.setBehaviour({ omitFinish: true });
    const { events } = await stream(REQUEST);
    expect(events.at(-1)!.event).toBe('content_block_stop');
  });

  it('paces events with eventDelayMs', async () => {
    sim.setBehaviour({ eventDelayMs: 15, deltas: 2 });
    const started = performance.now();
    const { events } = await stream(REQUEST);
    expect(events).toHaveLength(8);
    expect(performance.now() - started).toBeGreaterThanOrEqual(7 * 15 - 5);
  });

  it('destroys the socket after dropAfterEvents events', async () => {
    sim.setBehaviour({ dropAfterEvents: 3, eventDelayMs: 1 }, { times: 1 });
    const response = await post({ ...REQUEST, stream: true });
    const { seen, reading } = readEventNames(response);
    await expect(reading).rejects.toThrow();
    expect(seen).toEqual(['message_start', 'ping', 'content_block_start']);
  });

  it('destroys the socket after dropAfterEvents also on the single-write path', async () => {
    sim.setBehaviour({ dropAfterEvents: 2 }, { times: 1 });
    const response = await post({ ...REQUEST, stream: true });
    const { seen, reading } = readEventNames(response);
    await expect(reading).rejects.toThrow();
    expect(seen).toEqual(['message_start', 'ping']);
  });

  it('stops writing and keeps the connection open with stallAfterEvents', async () => {
    sim.setBehaviour({ stallAfterEvents: 1 }, { times: 1 });
    const controller = new AbortController();
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...REQUEST, stream: true }),
      signal: controller.signal,
    });
    const { seen, reading: read } = readEventNames(response);
    const reading = read.then(
      () => 'ended',
      () => 'aborted',
    );
    const outcome = await Promise.race([
      reading,
      new Promise((resolve) => setTimeout(() => resolve('open'), 150)),
    ]);
    expect(outcome).toBe('open');
    expect(seen).toEqual(['message_start']);
    controller.abort();
    expect(await reading).toBe('aborted');
  });
});

describe('messages wire: count_tokens', () => {
  it('answers input_tokens deterministically from the JSON bytes', async () => {
    const body = { model: REQUEST.model, messages: REQUEST.messages, system: REQUEST.system };
    const first = await (await post(body, '/v1/messages/count_tokens')).json();
    const second = await (await post(body, '/v1/messages/count_tokens')).json();
    expect(first).toEqual({ input_tokens: countTokens(body) });
    expect(second).toEqual(first);
    expect(sim.requests().map((r) => r.path)).toEqual([
      '/v1/messages/count_tokens',
      '/v1/messages/count_tokens',
    ]);
  });

  it('answers at least 1 and honours error behaviours', async () => {
    expect(countTokens({ messages: [] })).toBeGreaterThanOrEqual(1);
    sim.setBehaviour({ status: 401 }, { times: 1 });
    const response = await post({ model: 'm', messages: [] }, '/prefix/v1/messages/count_tokens');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { type: 'authentication_error' } });
  });
});

describe('split', () => {
  it('splits on code points into at most n parts', () => {
    expect(split('a😀b😀', 2)).toEqual(['a😀', 'b😀']);
    expect(split('ab', 5)).toEqual(['a', 'b']);
    expect(split('', 3)).toEqual([]);
  });
});
