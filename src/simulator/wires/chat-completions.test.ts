import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { parseChatResponse } from '../../primitives/chat-completions/response.js';
import { createChatStreamTranslator } from '../../primitives/chat-completions/stream.js';
import { readSse } from '../../primitives/shared/sse.js';
import { type TranslateContext, UpstreamProtocolError } from '../../primitives/shared/types.js';
import { useSimulator } from '../test-support.js';
import type { SimBehaviour } from '../types.js';
import { chatCompletionsWire } from './chat-completions.js';

/** The loose shape these tests read from bodies and chunks. */
interface Loose {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{
    message: { content: string | null; tool_calls?: Array<{ id: string; function: { arguments: string } }> };
    delta: { content?: string; tool_calls?: Array<{ index: number; id?: string }> };
    finish_reason: string | null;
  }>;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  } | null;
  error: { message: string; type: string; param: null; code: string | null };
}

const sim = useSimulator({ wires: [chatCompletionsWire] });

const REQUEST = {
  model: 'vendorb-test-1',
  max_completion_tokens: 100,
  messages: [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: 'What is the weather in Paris today?' },
  ],
};
const STREAM = { ...REQUEST, stream: true, stream_options: { include_usage: true } };
const TWO_TOOLS: SimBehaviour = {
  toolCalls: [
    { id: 'call_one', name: 'get_weather', input: { city: 'Paris', units: 'celsius' } },
    { id: 'call_two', name: 'get_time', input: { tz: 'Europe/Paris' } },
  ],
};
const context: TranslateContext = {
  upstreamModel: 'vendorb-test-1',
  responseModel: 'alias',
  messageId: 'msg_01SIM',
};

function post(body: unknown, path = '/v1/chat/completions'): Promise<Response> {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
  });
}

async function frames(body: unknown): Promise<string[]> {
  const response = await post(body);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const data: string[] = [];
  for await (const event of readSse(response.body!)) {
    expect(event.event).toBeUndefined();
    data.push(event.data);
  }
  return data;
}

function chunks(data: string[]): Loose[] {
  return data.filter((item) => item !== '[DONE]').map((item) => JSON.parse(item) as Loose);
}

describe('chat-completions wire: non-streaming', () => {
  it('answers a faithful chat.completion, also under a vendor prefix', async () => {
    sim.setBehaviour({ usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 3 } });
    const response = await post(REQUEST, '/openai/v1/chat/completions');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await response.json()) as Loose;
    expect(body).toMatchObject({ object: 'chat.completion', model: 'vendorb-test-1' });
    expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'Hello from the simulator.' },
      finish_reason: 'stop',
    });
    expect(body.usage).toMatchObject({
      prompt_tokens: 15,
      completion_tokens: 3,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 5 },
    });
    expect(sim.requests()).toHaveLength(1);
  });

  it('estimates usage by default: text bytes / 4 in, words out', async () => {
    const body = (await (await post(REQUEST)).json()) as Loose;
    const bytes = Buffer.byteLength('Be brief.What is the weather in Paris today?');
    expect(body.usage).toMatchObject({ prompt_tokens: Math.ceil(bytes / 4), completion_tokens: 4 });
  });

  it('answers tool calls with JSON-string arguments and maps stop reasons', async () => {
    sim.setBehaviour(TWO_TOOLS);
    const body = (await (await post(REQUEST)).json()) as Loose;
    expect(body.choices[0]?.message.content).toBeNull();
    expect(body.choices[0]?.finish_reason).toBe('tool_calls');
    expect(body.choices[0]?.message.tool_calls?.map((call) => call.id)).toEqual(['call_one', 'call_two']);
    sim.setBehaviour({ stopReason: 'max_tokens' });
    expect(((await (await post(REQUEST)).json()) as Loose).choices[0]?.finish_reason).toBe('length');
    sim.setBehaviour({ stopReason: 'refusal' });
    expect(((await (await post(REQUEST)).json()) as Loose).choices[0]?.finish_reason).toBe('content_filter');
  });

  it('sends invalid tool JSON when told to, which the primitive refuses', async () => {
    sim.setBehaviour({ ...TWO_TOOLS, invalidToolJson: true });
    const body = await (await post(REQUEST)).json();
    expect(() => parseChatResponse(body, context)).toThrow(UpstreamProtocolError);
  });

  it('answers errors in the vendorb envelope with retry-after', async () => {
    sim.setBehaviour({ status: 429, retryAfter: '3' });
    const response = await post(REQUEST);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(((await response.json()) as Loose).error).toEqual({
      message: 'Rate limit reached for requests.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    });
  });

  it('refuses a body the real wire would refuse', async () => {
    expect((await post({ model: 'm' })).status).toBe(400);
    expect((await post({ ...REQUEST, parallel_tool_calls: false })).status).toBe(400);
  });
});

describe('chat-completions wire: streaming', () => {
  it('streams data-only chunks, a usage chunk and [DONE] when include_usage is asked', async () => {
    const data = await frames(STREAM);
    expect(data.at(-1)).toBe('[DONE]');
    const parsed = chunks(data);
    expect(
      parsed.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === parsed[0]?.id),
    ).toBe(true);
    expect(parsed.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(parsed.at(-1)?.choices).toEqual([]);
    expect(parsed.at(-1)?.usage?.completion_tokens).toBe(4);
    expect(parsed.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(parsed.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(
      'Hello from the simulator.',
    );
  });

  it('sends no usage chunk without include_usage', async () => {
    const parsed = chunks(await frames({ ...REQUEST, stream: true }));
    expect(parsed.every((chunk) => !('usage' in chunk))).toBe(true);
    expect(parsed.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('interleaves two tool calls, and the primitive reassembles what the non-stream answer says', async () => {
    sim.setBehaviour(TWO_TOOLS);
    const data = await frames(STREAM);
    const indices = chunks(data).flatMap(
      (chunk) => chunk.choices[0]?.delta.tool_calls?.map((call) => call.index) ?? [],
    );
    expect(indices.slice(0, 4)).toEqual([0, 1, 0, 1]);
    const translator = createChatStreamTranslator(context, { tokenField: 'max_completion_tokens' });
    const events = data.flatMap((item) => translator.push({ data: item }));
    expect(translator.end().complete).toBe(true);
    const starts = events.filter((clientFrame) => clientFrame.event === 'content_block_start');
    expect(starts.map((clientFrame) => JSON.parse(clientFrame.data).content_block.id)).toEqual([
      'call_one',
      'call_two',
    ]);
    const nonStream = parseChatResponse(await (await post(REQUEST)).json(), context);
    expect(nonStream.content.map((block) => (block.type === 'tool_use' ? block.input : block))).toEqual([
      { city: 'Paris', units: 'celsius' },
      { tz: 'Europe/Paris' },
    ]);
  });

  it('omits finish, usage and [DONE] with omitFinish', async () => {
    sim.setBehaviour({ omitFinish: true });
    const data = await frames(STREAM);
    expect(data).not.toContain('[DONE]');
    expect(chunks(data).every((chunk) => chunk.choices[0]?.finish_reason === null)).toBe(true);
  });

  it('drops the connection after the given number of frames', async () => {
    sim.setBehaviour({ dropAfterEvents: 2 });
    const received: string[] = [];
    await expect(async () => {
      for await (const event of readSse((await post(STREAM)).body!)) received.push(event.data);
    }).rejects.toThrow();
    expect(received).toHaveLength(2);
  });

  it('stalls after the given number of frames, with the socket left open', async () => {
    sim.setBehaviour({ stallAfterEvents: 1 });
    const controller = new AbortController();
    const response = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(STREAM),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
    const next = await Promise.race([
      reader.read(),
      new Promise((resolve) => setTimeout(() => resolve('stalled'), 150)),
    ]);
    expect(next).toBe('stalled');
    controller.abort();
  });

  it('spaces frames by eventDelayMs', async () => {
    sim.setBehaviour({ eventDelayMs: 20, deltas: 2 });
    const started = Date.now();
    const data = await frames(STREAM);
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 * (data.length - 1) - 5);
  });

  it('is read by the official vendorb SDK, streaming and not', async () => {
    sim.setBehaviour(TWO_TOOLS);
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.chat.completions.stream({ ...REQUEST, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    expect(
      final.choices[0]?.message.tool_calls?.map(
        (call) => call.type === 'function' && JSON.parse(call.function.arguments),
      ),
    ).toEqual([{ city: 'Paris', units: 'celsius' }, { tz: 'Europe/Paris' }]);
    expect(final.usage?.prompt_tokens).toBeGreaterThan(0);
    sim.setBehaviour({ status: 503 });
    await expect(client.chat.completions.create(REQUEST)).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });
});
