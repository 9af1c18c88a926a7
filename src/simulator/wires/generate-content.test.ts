import { describe, expect, it } from 'vitest';
import { parseGenerateContentResponse } from '../../primitives/generate-content/response.js';
import { createGenerateContentStreamTranslator } from '../../primitives/generate-content/stream.js';
import { readSse } from '../../primitives/shared/sse.js';
import type { SseEvent, TranslateContext } from '../../primitives/shared/types.js';
import { useSimulator } from '../test-support.js';
import { generateContentWire } from './generate-content.js';

const sim = useSimulator({ wires: [generateContentWire] });

const CONTEXT: TranslateContext = {
  upstreamModel: 'gemini-test',
  responseModel: 'alias',
  messageId: 'msg_TEST',
};
const REQUEST = {
  // 9 + 35 = 44 bytes of text -> 11 input tokens by default.
  systemInstruction: { parts: [{ text: 'Be brief.' }] },
  contents: [{ role: 'user', parts: [{ text: 'What is the weather in Paris today?' }] }],
  generationConfig: { maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 0 } },
};

function post(body: unknown, action = 'generateContent', query = ''): Promise<Response> {
  return fetch(`${sim.url}/v1beta/models/gemini-test:${action}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'test-key' },
    body: JSON.stringify(body),
  });
}

async function streamEvents(body: unknown = REQUEST): Promise<SseEvent[]> {
  const response = await post(body, 'streamGenerateContent', '?alt=sse');
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const events: SseEvent[] = [];
  for await (const event of readSse(response.body!)) events.push(event);
  return events;
}

describe('generate-content wire: non-streaming', () => {
  it('answers a faithful GenerateContentResponse with default usage', async () => {
    const response = await post(REQUEST);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      candidates: [
        {
          content: { parts: [{ text: 'Hello from the simulator.' }], role: 'model' },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 },
      modelVersion: 'gemini-test',
    });
    expect(typeof body.responseId).toBe('string');
    expect(body.usageMetadata).not.toHaveProperty('thoughtsTokenCount');
    expect(sim.requests()[0]).toMatchObject({
      wire: 'generate-content',
      path: '/v1beta/models/gemini-test:generateContent',
    });
  });

  it('reports thinking tokens and cached tokens; the primitive bills thoughts as output', async () => {
    sim.setBehaviour({
      usage: { input_tokens: 10, output_tokens: 15, thinking_tokens: 804, cache_read_input_tokens: 20 },
    });
    const body = await (await post(REQUEST)).json();
    expect(body).toMatchObject({
      usageMetadata: {
        promptTokenCount: 30,
        cachedContentTokenCount: 20,
        candidatesTokenCount: 15,
        thoughtsTokenCount: 804,
        totalTokenCount: 849,
      },
    });
    expect(parseGenerateContentResponse(body, CONTEXT).usage).toEqual({
      input_tokens: 10,
      output_tokens: 819,
      cache_read_input_tokens: 20,
      cache_creation_input_tokens: 0,
    });
  });

  it('maps stop reasons to finish reasons', async () => {
    sim.setBehaviour({ stopReason: 'max_tokens' }, { times: 1 });
    expect(await (await post(REQUEST)).json()).toMatchObject({
      candidates: [{ finishReason: 'MAX_TOKENS' }],
    });
    sim.setBehaviour({ stopReason: 'refusal' }, { times: 1 });
    expect(await (await post(REQUEST)).json()).toMatchObject({ candidates: [{ finishReason: 'SAFETY' }] });
  });

  it('answers tool calls as whole functionCall parts', async () => {
    sim.setBehaviour(
      { text: 'Checking.', toolCalls: [{ name: 'get_weather', input: { city: 'Paris' } }] },
      { times: 1 },
    );
    expect(await (await post(REQUEST)).json()).toMatchObject({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Checking.' },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
            ],
          },
        },
      ],
    });
  });

  it('answers the RPC error body, with RetryInfo on 429', async () => {
    sim.setBehaviour({ status: 429, retryAfter: '34', errorMessage: 'quota' }, { times: 1 });
    const response = await post(REQUEST);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('34');
    expect(await response.json()).toEqual({
      error: {
        code: 429,
        message: 'quota',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' }],
      },
    });
    sim.setBehaviour({ status: 503 }, { times: 1 });
    expect(await (await post(REQUEST)).json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
  });

  it('answers the service 400s for empty contents, empty parts and budget with level', async () => {
    const invalid = async (body: unknown) => {
      const response = await post(body);
      expect(response.status).toBe(400);
      return ((await response.json()) as { error: { status: string; message: string } }).error;
    };
    expect(await invalid({ contents: [] })).toMatchObject({
      status: 'INVALID_ARGUMENT',
      message: expect.stringContaining('contents is not specified'),
    });
    expect((await invalid({ contents: [{ role: 'user', parts: [] }] })).message).toContain(
      'must not be empty',
    );
    expect((await invalid({ contents: [{ role: 'user', parts: [{}] }] })).message).toContain(
      "oneof field 'data'",
    );
    const both = {
      ...REQUEST,
      generationConfig: { thinkingConfig: { thinkingBudget: 0, thinkingLevel: 'LOW' } },
    };
    expect((await invalid(both)).status).toBe('INVALID_ARGUMENT');
  });
});

describe('generate-content wire: streaming', () => {
  it('streams data-only CRLF events with cumulative usage and a final finish chunk', async () => {
    sim.setBehaviour({
      text: 'one two three four',
      deltas: 2,
      usage: { input_tokens: 5, output_tokens: 8, thinking_tokens: 3 },
    });
    const response = await post(REQUEST, 'streamGenerateContent', '?alt=sse');
    const raw = await response.text();
    expect(raw.startsWith('data: {')).toBe(true);
    expect(raw.endsWith('}\r\n\r\n')).toBe(true);
    expect(raw).not.toContain('event:');
    const events = await streamEvents();
    expect(events).toHaveLength(3);
    const chunks = events.map(
      (event) =>
        JSON.parse(event.data) as {
          candidates: Array<{ finishReason?: string; content: { parts: unknown[] } }>;
          usageMetadata: Record<string, number>;
        },
    );
    expect(chunks[0]?.candidates[0]?.finishReason).toBeUndefined();
    expect(chunks[2]).toMatchObject({
      candidates: [{ content: { parts: [{ text: '' }] }, finishReason: 'STOP' }],
      usageMetadata: { candidatesTokenCount: 8, thoughtsTokenCount: 3 },
    });
    const translator = createGenerateContentStreamTranslator(CONTEXT);
    const frames = events.flatMap((event) => translator.push(event));
    expect(translator.end().complete).toBe(true);
    const text = frames.flatMap((frame) => {
      const event = JSON.parse(frame.data) as { type: string; delta?: { text?: string } };
      return event.type === 'content_block_delta' ? [event.delta?.text ?? ''] : [];
    });
    expect(text.join('')).toBe('one two three four');
    expect(translator.usage()).toEqual({
      input_tokens: 5,
      output_tokens: 11,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it('leaves out the finish chunk with omitFinish: the primitive reports a truncation', async () => {
    sim.setBehaviour({ omitFinish: true }, { times: 1 });
    const events = await streamEvents();
    const translator = createGenerateContentStreamTranslator(CONTEXT);
    const frames = events.flatMap((event) => translator.push(event));
    expect(translator.end().complete).toBe(false);
    expect(frames.map((frame) => frame.event)).not.toContain('message_stop');
  });

  it('answers one JSON array without alt=sse', async () => {
    const response = await post(REQUEST, 'streamGenerateContent');
    const chunks = JSON.parse(await response.text()) as unknown[];
    expect(chunks).toHaveLength(5);
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }] });
  });

  it('destroys the socket after dropAfterEvents events', async () => {
    sim.setBehaviour({ dropAfterEvents: 2, eventDelayMs: 1 }, { times: 1 });
    const response = await post(REQUEST, 'streamGenerateContent', '?alt=sse');
    let seen = 0;
    await expect(
      (async () => {
        for await (const _event of readSse(response.body!)) seen += 1;
      })(),
    ).rejects.toThrow();
    expect(seen).toBe(2);
  });
});
