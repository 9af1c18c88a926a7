import { describe, expect, it } from 'vitest';
import type { MessageResponse, StreamEvent } from '../../canonical/types.js';
import { canonicalToChatCompletion } from './outbound-response.js';
import { ChatChunkWriter, DONE_FRAME } from './outbound-stream.js';

const CONTEXT = { id: 'chatcmpl-1', created: 1_700_000_000, model: 'alias' };

const message = (extra: Partial<MessageResponse>): MessageResponse => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  content: [],
  model: 'alias',
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 2, cache_read_input_tokens: 3 },
  ...extra,
});

describe('canonical answer -> chat.completion', () => {
  it('joins text, turns tool_use into tool_calls, drops thinking, maps the stop reason and the usage', () => {
    const completion = canonicalToChatCompletion(
      message({
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'text', text: 'Checking ' },
          { type: 'text', text: 'now.' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
      }),
      CONTEXT,
    );
    expect(completion).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'alias',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking now.',
            refusal: null,
            tool_calls: [
              {
                id: 'toolu_1',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      // prompt_tokens counts the cached and cache-written tokens too (the chat wire's convention).
      usage: {
        prompt_tokens: 15,
        completion_tokens: 5,
        total_tokens: 20,
        prompt_tokens_details: { cached_tokens: 3 },
      },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content_filter'],
  ] as const)('maps stop_reason %s to finish_reason %s; no text is content null', (stop, finish) => {
    const completion = canonicalToChatCompletion(message({ stop_reason: stop }), CONTEXT);
    expect(completion.choices[0]!.finish_reason).toBe(finish);
    expect(completion.choices[0]!.message.content).toBeNull();
  });
});

const EVENTS: StreamEvent[] = [
  {
    type: 'message_start',
    message: message({
      usage: {
        input_tokens: 7,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    }),
  },
  { type: 'ping' },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'hidden' } },
  { type: 'content_block_stop', index: 1 },
  {
    type: 'content_block_start',
    index: 2,
    content_block: { type: 'tool_use', id: 'toolu_9', name: 'f', input: {} },
  },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
  { type: 'content_block_stop', index: 2 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 12 },
  },
  { type: 'message_stop' },
];

function render(includeUsage: boolean, events: StreamEvent[] = EVENTS): string[] {
  const writer = new ChatChunkWriter(CONTEXT, includeUsage, (error) => ({
    message: error.message,
    type: 'server_error',
    param: null,
    code: error.code ?? null,
  }));
  return events
    .map((event) => writer.event(event))
    .join('')
    .split('\n\n')
    .filter(Boolean);
}

const data = (frame: string) => JSON.parse(frame.slice('data: '.length));

describe('canonical stream -> chat.completion.chunk events', () => {
  it('role first, text, tool calls by index, finish_reason, the usage chunk, then [DONE]', () => {
    const frames = render(true);
    expect(`${frames.at(-1)}\n\n`).toBe(DONE_FRAME);
    const chunks = frames.slice(0, -1).map(data);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hi' },
      { tool_calls: [{ index: 0, id: 'toolu_9', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      {},
      null,
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(
      chunks.slice(0, -1).every((chunk) => chunk.usage === null && chunk.object === 'chat.completion.chunk'),
    ).toBe(true);
    expect(chunks.at(-1)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'alias',
      choices: [],
      usage: {
        prompt_tokens: 7,
        completion_tokens: 12,
        total_tokens: 19,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    });
  });

  it('writes each chunk as JSON.stringify writes the whole chunk object, with a name and model that need escaping', () => {
    for (const includeUsage of [true, false]) {
      const context = { id: 'chatcmpl-"é"\\', created: 1_700_000_001, model: 'al"ias ☃' };
      const writer = new ChatChunkWriter(context, includeUsage, () => ({
        message: '',
        type: 'server_error',
        param: null,
        code: null,
      }));
      const frames = EVENTS.slice(0, -1)
        .map((event) => writer.event(event))
        .filter(Boolean);
      for (const frame of frames) {
        const parsed = data(frame);
        expect(frame).toBe(`data: ${JSON.stringify(parsed)}\n\n`);
        expect(Object.keys(parsed)).toEqual([
          'id',
          'object',
          'created',
          'model',
          'choices',
          ...(includeUsage ? ['usage'] : []),
        ]);
        expect(parsed).toMatchObject({ id: context.id, model: context.model, created: context.created });
        expect(Object.keys(parsed.choices[0])).toEqual(['index', 'delta', 'logprobs', 'finish_reason']);
      }
      expect(data(frames.at(-1)!).choices[0].finish_reason).toBe('tool_calls');
    }
  });

  it('without include_usage: no usage field and no usage chunk', () => {
    const chunks = render(false).slice(0, -1).map(data);
    expect(chunks.every((chunk) => !('usage' in chunk) && chunk.choices.length === 1)).toBe(true);
  });

  it('an error event becomes a data error object and nothing follows it', () => {
    const frames = render(false, [
      EVENTS[0]!,
      {
        type: 'error',
        error: { type: 'api_error', message: 'Stream interrupted.', code: 'upstream_unavailable' },
      },
      { type: 'message_stop' },
    ]);
    expect(frames.map(data).at(-1)).toEqual({
      error: {
        message: 'Stream interrupted.',
        type: 'server_error',
        param: null,
        code: 'upstream_unavailable',
      },
    });
    expect(frames).toHaveLength(2);
  });
});
