import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseResponsesResponse } from '../../primitives/responses/response.js';
import { createResponsesStreamTranslator } from '../../primitives/responses/stream.js';
import { readSse } from '../../primitives/shared/sse.js';
import type { SseEvent, TranslateContext } from '../../primitives/shared/types.js';
import { readEventNames, useSimulator } from '../test-support.js';
import { responsesWire } from './responses.js';

let client: OpenAI;

const sim = useSimulator({ wires: [responsesWire] });

beforeAll(() => {
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${sim.url}/v1`, maxRetries: 0 });
});

const CONTEXT: TranslateContext = {
  upstreamModel: 'gpt-test-1',
  responseModel: 'alias',
  messageId: 'msg_TEST',
};
const REQUEST = {
  model: 'gpt-test-1',
  // 9 + 35 = 44 bytes of text -> 11 input tokens by default.
  instructions: 'Be brief.',
  input: [
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'What is the weather in Paris today?' }],
    },
  ],
  max_output_tokens: 100,
  store: false,
};

function post(body: unknown, path = '/v1/responses'): Promise<Response> {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
  });
}

async function readEvents(response: Response): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(response.body!)) events.push(event);
  return events;
}

describe('responses wire: non-streaming', () => {
  it('answers a faithful Response object with default usage', async () => {
    const response = await post(REQUEST);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-test-1',
      instructions: 'Be brief.',
      store: false,
      error: null,
      incomplete_details: null,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello from the simulator.', annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 11,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        total_tokens: 15,
      },
    });
    expect(body.id).toMatch(/^resp_/);
    expect(sim.requests()[0]).toMatchObject({ wire: 'responses', path: '/v1/responses', body: REQUEST });
  });

  it('answers tool calls as function_call items and maps the canonical usage (cached inside input)', async () => {
    sim.setBehaviour({
      text: 'Checking.',
      toolCalls: [{ id: 'call_fixed', name: 'get_weather', input: { city: 'Paris' } }],
      usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 100 },
    });
    const message = parseResponsesResponse(await (await post(REQUEST)).json(), CONTEXT);
    expect(message).toMatchObject({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_fixed', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 10,
        output_tokens: 20,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 0,
      },
    });
  });

  it('reports max_tokens and refusal as incomplete responses', async () => {
    sim.setBehaviour({ stopReason: 'max_tokens' }, { times: 1 });
    expect(await (await post(REQUEST)).json()).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    sim.setBehaviour({ stopReason: 'refusal' }, { times: 1 });
    expect(await (await post(REQUEST)).json()).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
    });
  });

  it('answers the vendorb error body with status and retry-after; the SDK raises its typed error', async () => {
    sim.setBehaviour({ status: 429, retryAfter: '7', errorMessage: 'slow down' }, { times: 1 });
    const response = await post(REQUEST);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({
      error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
    sim.setBehaviour({ status: 500 }, { times: 1 });
    await expect(client.responses.create({ model: 'gpt-test-1', input: 'hi' })).rejects.toBeInstanceOf(
      OpenAI.InternalServerError,
    );
  });

  it('answers 400 for a body the upstream cannot read', async () => {
    const response = await post({ model: 'gpt-test-1' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: "Missing required parameter: 'input'." },
    });
  });

  it('is read by the official SDK', async () => {
    const response = await client.responses.create({ model: 'gpt-test-1', input: 'hi', store: false });
    expect(response.output_text).toBe('Hello from the simulator.');
  });
});

describe('responses wire: streaming', () => {
  it('sends numbered events the official SDK accumulates into the final response', async () => {
    sim.setBehaviour({
      text: 'It is sunny.',
      toolCalls: [{ name: 'get_weather', input: { city: 'Paris' } }],
    });
    const stream = client.responses.stream({ model: 'gpt-test-1', input: 'weather?', store: false });
    const sequence: number[] = [];
    stream.on('event', (event) => sequence.push(event.sequence_number));
    const final = await stream.finalResponse();
    expect(sequence).toEqual(sequence.map((_, index) => index));
    expect(final.output_text).toBe('It is sunny.');
    expect(final.output[1]).toMatchObject({
      type: 'function_call',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
  });

  it('translates through the responses primitive into the same message as the JSON answer', async () => {
    sim.setBehaviour({
      text: 'One two three.',
      toolCalls: [{ id: 'call_1', name: 'f', input: { a: 1 } }],
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    const events = await readEvents(await post({ ...REQUEST, stream: true }));
    expect(events[0]?.event).toBe('response.created');
    expect(events.at(-1)?.event).toBe('response.completed');
    const translator = createResponsesStreamTranslator(CONTEXT);
    const frames = events.flatMap((event) => translator.push(event));
    expect(translator.end().complete).toBe(true);
    expect(frames.map((frame) => frame.event)).toContain('message_stop');
    expect(translator.usage()).toEqual({
      input_tokens: 5,
      output_tokens: 6,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it('omits the terminal event with omitFinish', async () => {
    sim.setBehaviour({ omitFinish: true }, { times: 1 });
    const events = await readEvents(await post({ ...REQUEST, stream: true }));
    expect(events.at(-1)?.event).toBe('response.output_item.done');
    const translator = createResponsesStreamTranslator(CONTEXT);
    for (const event of events) translator.push(event);
    expect(translator.end().complete).toBe(false);
  });

  it('sends invalid arguments JSON with invalidToolJson', async () => {
    sim.setBehaviour({ toolCalls: [{ name: 'f', input: { a: 1 } }], invalidToolJson: true }, { times: 1 });
    const body = (await (await post(REQUEST)).json()) as { output: Array<{ arguments?: string }> };
    expect(body.output[0]?.arguments).toBe('{"a":1,');
  });

  it('destroys the socket after dropAfterEvents events', async () => {
    sim.setBehaviour({ dropAfterEvents: 3 }, { times: 1 });
    const response = await post({ ...REQUEST, stream: true });
    const { seen, reading } = readEventNames(response);
    await expect(reading).rejects.toThrow();
    expect(seen).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
  });

  it('stops writing and keeps the connection open with stallAfterEvents', async () => {
    sim.setBehaviour({ stallAfterEvents: 2, eventDelayMs: 1 }, { times: 1 });
    const controller = new AbortController();
    const response = await fetch(`${sim.url}/v1/responses`, {
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
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen).toEqual(['response.created', 'response.in_progress']);
    controller.abort();
    expect(await reading).toBe('aborted');
  });
});
