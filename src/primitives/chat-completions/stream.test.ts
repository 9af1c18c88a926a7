import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../canonical/types.js';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import {
  type ChatStreamState,
  createChatStreamTranslator,
  INITIAL_CHAT_STREAM_STATE,
  step,
} from './stream.js';
import type { ChatCompletionChunk, ChatDeltaToolCall } from './wire-types.js';

const context: TranslateContext = {
  upstreamModel: 'up-model',
  responseModel: 'alias',
  messageId: 'msg_01TEST',
};

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1763700000,
    model: 'up-model-2026',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
}

function usageChunk(prompt: number, completion: number, cached = 0): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      prompt_tokens_details: { cached_tokens: cached },
    },
  });
}

function toolDelta(index: number, fragment: string, header?: { id: string; name: string }): string {
  const call: ChatDeltaToolCall =
    header === undefined
      ? { index, function: { arguments: fragment } }
      : { index, id: header.id, type: 'function', function: { name: header.name, arguments: fragment } };
  return chunk({ tool_calls: [call] });
}

function run(frames: string[]): { events: StreamEvent[]; complete: boolean } {
  const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
  const pushed = frames.flatMap((data) => translator.push({ data }));
  const end = translator.end();
  const events = [...pushed, ...end.frames].map((clientFrame) => JSON.parse(clientFrame.data) as StreamEvent);
  return { events, complete: end.complete };
}

/** Blocks open in index order, one at a time, and deltas only reach the open block. */
function expectWellFormed(events: StreamEvent[]): void {
  let open: number | undefined;
  let next = 0;
  for (const event of events) {
    if (event.type === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(event.index).toBe(next);
      open = event.index;
      next += 1;
    } else if (event.type === 'content_block_delta') {
      expect(event.index).toBe(open);
    } else if (event.type === 'content_block_stop') {
      expect(event.index).toBe(open);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}

describe('chat stream translator', () => {
  it('writes a text delta as JSON.stringify writes the event, whatever the text holds', () => {
    const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
    translator.push({ data: chunk({ role: 'assistant', content: '' }) });
    for (const text of ['Hel', 'a "quote" \\ and\nnew line', 'é ☃ 😀 \u2028 \u0001', '</script>']) {
      const frames = translator.push({ data: chunk({ content: text }) });
      const delta = frames.at(-1)!;
      expect(delta.event).toBe('content_block_delta');
      expect(delta.data).toBe(
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      );
    }
  });

  it('translates a text stream and waits for the usage chunk before message_delta', () => {
    const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
    const types = (data: string) => translator.push({ data }).map((clientFrame) => clientFrame.event);
    expect(types(chunk({ role: 'assistant', content: '' }))).toEqual(['message_start']);
    expect(types(chunk({ content: 'Hel' }))).toEqual(['content_block_start', 'content_block_delta']);
    expect(types(chunk({ content: 'lo' }))).toEqual(['content_block_delta']);
    expect(types(chunk({}, 'stop'))).toEqual(['content_block_stop']);
    expect(translator.usage()).toBeUndefined();
    const final = translator.push({ data: usageChunk(9, 2, 4) });
    expect(final.map((clientFrame) => clientFrame.event)).toEqual(['message_delta', 'message_stop']);
    expect(JSON.parse(final[0]?.data ?? '{}')).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {
        input_tokens: 5,
        output_tokens: 2,
        cache_read_input_tokens: 4,
        cache_creation_input_tokens: 0,
      },
    });
    expect(translator.usage()).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 0,
    });
    expect(translator.push({ data: '[DONE]' })).toEqual([]);
    expect(translator.end()).toEqual({ frames: [], complete: true });
  });

  it('gives each of two interleaved tool calls its own block, in order', () => {
    const { events, complete } = run([
      chunk({ role: 'assistant', content: null }),
      toolDelta(0, '', { id: 'call_A', name: 'a' }),
      toolDelta(1, '{"y":', { id: 'call_B', name: 'b' }),
      toolDelta(0, '{"x":'),
      toolDelta(1, '2}'),
      toolDelta(0, '1}'),
      chunk({}, 'tool_calls'),
      usageChunk(10, 5),
      '[DONE]',
    ]);
    expect(complete).toBe(true);
    expectWellFormed(events);
    const starts = events.filter((event) => event.type === 'content_block_start');
    expect(starts.map((event) => [event.index, event.content_block])).toEqual([
      [0, { type: 'tool_use', id: 'call_A', name: 'a', input: {} }],
      [1, { type: 'tool_use', id: 'call_B', name: 'b', input: {} }],
    ]);
    const jsonOf = (index: number) =>
      events
        .filter((event) => event.type === 'content_block_delta' && event.index === index)
        .map((event) =>
          event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
            ? event.delta.partial_json
            : '',
        )
        .join('');
    expect(jsonOf(0)).toBe('{"x":1}');
    expect(jsonOf(1)).toBe('{"y":2}');
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it('is incomplete and never stops cleanly without a finish_reason', () => {
    const cut = run([
      chunk({ role: 'assistant', content: 'Hi' }),
      toolDelta(0, '{"a"', { id: 'c', name: 'n' }),
    ]);
    expect(cut.complete).toBe(false);
    expect(cut.events.map((event) => event.type)).not.toContain('message_stop');
    expect(cut.events.map((event) => event.type)).not.toContain('message_delta');
    expect(run([chunk({ content: 'Hi' }), usageChunk(1, 1), '[DONE]']).complete).toBe(false);
    expect(run([]).complete).toBe(false);
  });

  it('finishes at end of body when finish_reason came but neither usage nor [DONE]', () => {
    const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
    translator.push({ data: chunk({ content: 'Hi' }, 'length') });
    const end = translator.end();
    expect(end.complete).toBe(true);
    expect(end.frames.map((clientFrame) => clientFrame.event)).toEqual(['message_delta', 'message_stop']);
    expect(translator.usage()).toBeUndefined();
  });

  it('puts text that follows a tool call in a text block after the tool blocks', () => {
    const { events } = run([
      toolDelta(0, '{}', { id: 'c', name: 'n' }),
      chunk({ content: 'late' }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    expectWellFormed(events);
    expect(
      events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type),
    ).toEqual(['tool_use', 'text']);
  });

  it('derives an id for a tool call sent without one and ignores empty tool_calls arrays', () => {
    const { events } = run([
      chunk({ content: 'x', tool_calls: [] }),
      chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'n', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    expect(
      events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block),
    ).toEqual([
      { type: 'text', text: '' },
      { type: 'tool_use', id: 'toolu_01TEST_0', name: 'n', input: {} },
    ]);
  });

  it.each([
    ['invalid tool JSON at finish', [toolDelta(0, '{"a":', { id: 'c', name: 'n' }), chunk({}, 'tool_calls')]],
    [
      'tool arguments that are not an object',
      [toolDelta(0, '[1]', { id: 'c', name: 'n' }), chunk({}, 'tool_calls')],
    ],
    [
      'a fragment for a call whose object was complete',
      [
        toolDelta(0, '{}', { id: 'c', name: 'n' }),
        toolDelta(1, '{}', { id: 'd', name: 'n' }),
        toolDelta(0, 'x'),
      ],
    ],
    [
      'an error frame',
      [chunk({ content: 'x' }), JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })],
    ],
    ['a frame that is not JSON', ['{nope']],
  ])('throws UpstreamProtocolError on %s', (_name, frames) => {
    expect(() => run(frames)).toThrow(UpstreamProtocolError);
  });

  it('throws on an `event: error` frame and ignores empty frames', () => {
    const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
    expect(translator.push({ data: '' })).toEqual([]);
    expect(() => translator.push({ event: 'error', data: '{"error":{"message":"x"}}' })).toThrow(
      UpstreamProtocolError,
    );
  });

  it('steps without changing the state it was given', () => {
    let state: ChatStreamState = INITIAL_CHAT_STREAM_STATE;
    const frames = [
      chunk({ content: 'a' }),
      toolDelta(0, '{"q"', { id: 'c', name: 'n' }),
      toolDelta(1, '{}', { id: 'd', name: 'm' }),
    ];
    for (const data of frames) {
      const before = structuredClone(state);
      const result = step(state, { kind: 'chunk', chunk: JSON.parse(data) as ChatCompletionChunk }, context);
      expect(state).toEqual(before);
      state = result.state;
    }
    expect(state.phase).toBe('streaming');
  });
});
