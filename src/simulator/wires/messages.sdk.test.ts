/**
 * End to end: the official vendora SDK pointed straight at the simulator (baseURL = simulator URL;
 * the SDK appends /v1/messages), proving the simulated wire is faithful enough for a real client.
 * The last test also pipes the simulated stream through the messages primitive's translator.
 */
import Anthropic from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMessagesStreamTranslator } from '../../primitives/messages/stream.js';
import { readSse } from '../../primitives/shared/sse.js';
import { useSimulator } from '../test-support.js';
import { messagesWire } from './messages.js';

let client: Anthropic;

const sim = useSimulator({ wires: [messagesWire] });

beforeAll(() => {
  client = new Anthropic({ baseURL: sim.url, apiKey: 'sk-test', maxRetries: 0 });
});

const PARAMS = {
  model: 'vendora-test-1',
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
};

describe('@anthropic-ai/sdk against the simulator', () => {
  it('creates a message (non-streaming)', async () => {
    const message = await client.messages.create(PARAMS);
    expect(message.type).toBe('message');
    expect(message.model).toBe('vendora-test-1');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the simulator.', citations: null }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message._request_id).toMatch(/^req_/);
    const [recorded] = sim.requests();
    expect(recorded).toMatchObject({ wire: 'messages', path: '/v1/messages', body: PARAMS });
    expect(recorded!.headers['x-api-key']).toBe('sk-test');
  });

  it('streams text and tool use into the SDK accumulator', async () => {
    sim.setBehaviour({
      text: 'Checking the weather now.',
      deltas: 5,
      toolCalls: [{ name: 'get_weather', input: { city: 'Paris', units: 'metric', days: [1, 2] } }],
      usage: { input_tokens: 40, output_tokens: 22, cache_read_input_tokens: 8 },
    });
    const texts: string[] = [];
    const stream = client.messages.stream(PARAMS).on('text', (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(texts.join('')).toBe('Checking the weather now.');
    expect(texts.length).toBe(5);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Checking the weather now.' });
    expect(message.content[1]).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: { city: 'Paris', units: 'metric', days: [1, 2] },
    });
    expect(message.usage).toMatchObject({ input_tokens: 40, output_tokens: 22, cache_read_input_tokens: 8 });
  });

  it('yields the raw events with create({stream: true})', async () => {
    const types: string[] = [];
    for await (const event of await client.messages.create({ ...PARAMS, stream: true }))
      types.push(event.type);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('message_delta');
  });

  it('raises the SDK error class for the status and reads the error envelope', async () => {
    sim.setBehaviour({ status: 529, errorMessage: 'Overloaded' }, { times: 1 });
    const error = await client.messages.create(PARAMS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(529);
    expect(apiError.error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    sim.setBehaviour({ status: 429, retryAfter: '1' }, { times: 1 });
    await expect(client.messages.create(PARAMS)).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });

  it('fails the stream when the connection drops mid-stream', async () => {
    sim.setBehaviour({ dropAfterEvents: 4 }, { times: 1 });
    await expect(client.messages.stream(PARAMS).finalMessage()).rejects.toThrow();
  });

  it('counts tokens, also under a base URL prefix', async () => {
    const prefixed = new Anthropic({
      baseURL: `${sim.url}/vendora-mantle`,
      apiKey: 'sk-test',
      maxRetries: 0,
    });
    const count = await prefixed.messages.countTokens({ model: PARAMS.model, messages: PARAMS.messages });
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(sim.requests()[0]!.path).toBe('/vendora-mantle/v1/messages/count_tokens');
  });

  it('accumulates the simulated stream after the messages primitive passed it through', async () => {
    sim.setBehaviour({ text: 'Via the primitive.', toolCalls: [{ name: 'noop', input: { ok: true } }] });
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...PARAMS, stream: true }),
    });
    const context = { upstreamModel: 'vendora-test-1', responseModel: 'alias', messageId: 'msg_gateway' };
    const translator = createMessagesStreamTranslator(context);
    let lines = '';
    for await (const event of readSse(response.body!)) {
      for (const frame of translator.push(event)) lines += `${frame.data}\n`;
    }
    expect(translator.end().complete).toBe(true);
    const accumulated = MessageStream.fromReadableStream(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(lines));
          controller.close();
        },
      }),
    );
    const message = await accumulated.finalMessage();
    expect(message).toMatchObject({
      id: 'msg_gateway',
      model: 'alias',
      content: [
        { type: 'text', text: 'Via the primitive.' },
        { type: 'tool_use', name: 'noop', input: { ok: true } },
      ],
    });
    expect(translator.usage()).toEqual({
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });
});
