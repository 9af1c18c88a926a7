/**
 * The plain text chunk read without parsing the whole chunk (text-chunk.ts): the shape is kept
 * only where the content string is the delta's content, a chunk is read only when it is the same
 * text around one JSON string, and the translator writes the same frames and events as the pure
 * state machine (step / finish) for any stream, plain chunks of the shape or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TranslateContext } from '../shared/types.js';
import {
  createChatStreamTranslator,
  finish,
  INITIAL_CHAT_STREAM_STATE,
  parseChatSseEvent,
  step,
} from './stream.js';
import { shapedText, textChunkShape } from './text-chunk.js';

const context: TranslateContext = { upstreamModel: 'up', responseModel: 'alias', messageId: 'msg_01TEXT' };

function envelope(choices: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1763700000,
    model: 'up-2026',
    choices,
    usage: null,
    ...extra,
  };
}

const textChunk = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    envelope([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }], extra),
  );

function shapeOf(data: string) {
  return textChunkShape(data, JSON.parse(data));
}

describe('textChunkShape', () => {
  it('cuts a compact plain text chunk around its content string', () => {
    const shape = shapeOf(textChunk('Hello'));
    expect(shape?.prefix.endsWith('"delta":{"content":')).toBe(true);
    expect(shape?.suffix).toBe('},"logprobs":null,"finish_reason":null}],"usage":null}');
  });

  it.each([
    [
      'a finish reason',
      JSON.stringify(envelope([{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }])),
    ],
    [
      'a role beside the content',
      JSON.stringify(envelope([{ index: 0, delta: { role: 'assistant', content: '' } }])),
    ],
    ['usage', textChunk('a', { usage: { prompt_tokens: 1, completion_tokens: 2 } })],
    ['an error', textChunk('a', { error: { message: 'x' } })],
    ['whitespace in the chunk', JSON.stringify(JSON.parse(textChunk('a')), null, 1)],
    ['the content key twice', textChunk('a').replace('{"content":"a"}', '{"content":"a","content":"b"}')],
    [
      'the pattern twice (once under another key)',
      textChunk('a').replace('{"id"', '{"x\\"delta":{"content":"a"},"id"'),
    ],
    [
      'the pattern once, under another key (the delta written with a space)',
      '{"x\\"delta":{"content":"a"},"choices":[{"index":0,"delta": {"content":"a"}}]}',
    ],
  ])('keeps no shape for a chunk with %s', (_what, data) => {
    expect(shapeOf(data)).toBeUndefined();
  });
});

describe('shapedText', () => {
  const shape = shapeOf(textChunk('first'))!;

  it.each(['', 'word ', 'a "quoted" word', 'line\nbreak\ttab', 'é ☃ 😀', '\\', '\u0000', '</script>'])(
    'reads %j as JSON.parse does',
    (text) => {
      expect(shapedText(shape, textChunk(text))).toBe(text);
    },
  );

  it('reads escapes the upstream chose (\\u00e9, \\/) as JSON.parse does', () => {
    expect(shapedText(shape, textChunk('x').replace('"x"', '"\\u00e9\\/"'))).toBe('é/');
  });

  it.each([
    ['another id', textChunk('a', { id: 'chatcmpl-2' })],
    ['two strings in the place', textChunk('a').replace('"a"', '"a","b"')],
    ['a number in the place', textChunk('a').replace('"a"', '1')],
    ['an unterminated string', textChunk('a').replace('"a"', '"a\\"')],
    ['a raw control character', textChunk('a').replace('"a"', '"a\u0001"')],
    ['a finish reason', textChunk('a').replace('"finish_reason":null', '"finish_reason":"stop"')],
    ['nothing in the place', textChunk('a').replace('"a"', '')],
  ])('reads no text from a chunk with %s', (_what, data) => {
    expect(shapedText(shape, data)).toBeUndefined();
  });
});

/** The pure state machine's serialised events for `datas`, or the error it throws. */
function reference(datas: string[]): { events: string[]; complete: boolean } | { error: string } {
  try {
    let state = INITIAL_CHAT_STREAM_STATE;
    const events: string[] = [];
    for (const data of datas) {
      const input = parseChatSseEvent({ data });
      if (input === undefined) continue;
      const result = step(state, input, context);
      state = result.state;
      for (const event of result.events) events.push(JSON.stringify(event));
    }
    const last = finish(state);
    for (const event of last.events) events.push(JSON.stringify(event));
    return { events, complete: last.complete };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function translated(
  datas: string[],
  asEvents: boolean,
): { events: string[]; complete: boolean } | { error: string } {
  const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
  try {
    const events: string[] = [];
    for (const data of datas) {
      if (asEvents) for (const event of translator.pushEvents({ data })) events.push(JSON.stringify(event));
      else for (const frame of translator.push({ data })) events.push(frame.data);
    }
    if (asEvents) {
      const last = translator.endEvents();
      for (const event of last.events) events.push(JSON.stringify(event));
      return { events, complete: last.complete };
    }
    const last = translator.end();
    for (const frame of last.frames) events.push(frame.data);
    return { events, complete: last.complete };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const anyText = fc.string({ unit: 'binary', maxLength: 12 });
const piece = fc.oneof(
  { weight: 6, arbitrary: anyText.map((text) => textChunk(text)) },
  { weight: 1, arbitrary: anyText.map((text) => JSON.stringify(JSON.parse(textChunk(text)), null, 1)) },
  { weight: 1, arbitrary: anyText.map((text) => textChunk(text, { id: 'chatcmpl-other' })) },
  {
    weight: 1,
    arbitrary: anyText.map((text) => textChunk(text).replace('"content":"', '"content":"\\u0041')),
  },
  {
    weight: 1,
    arbitrary: anyText.map((text) =>
      JSON.stringify(envelope([{ index: 0, delta: { refusal: text }, finish_reason: null }])),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('{"a":', '1}', '{}').map((fragment) =>
      JSON.stringify(
        envelope([
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: fragment } }] },
            finish_reason: null,
          },
        ]),
      ),
    ),
  },
  {
    // a call whose name comes later: it waits, and the text block stays open meanwhile
    weight: 1,
    arbitrary: fc.constant(
      JSON.stringify(
        envelope([
          {
            index: 0,
            delta: { tool_calls: [{ index: 1, function: { arguments: '' } }] },
            finish_reason: null,
          },
        ]),
      ),
    ),
  },
  { weight: 1, arbitrary: fc.constant(textChunk('x').replace('"x"', '"x","y"')) },
  { weight: 1, arbitrary: fc.constant('not json') },
);
const stream = fc
  .tuple(fc.boolean(), fc.array(piece, { maxLength: 12 }), fc.constantFrom('stop', 'length', null))
  .map(([role, pieces, finishReason]) => [
    ...(role ? [JSON.stringify(envelope([{ index: 0, delta: { role: 'assistant', content: '' } }]))] : []),
    ...pieces,
    ...(finishReason === null
      ? []
      : [
          JSON.stringify(envelope([{ index: 0, delta: {}, finish_reason: finishReason }])),
          JSON.stringify(envelope([], { usage: { prompt_tokens: 3, completion_tokens: 4 } })),
          '[DONE]',
        ]),
  ]);

describe('the translator with plain text chunks read by shape', () => {
  it('writes the frames and events of the pure state machine for any stream', () => {
    fc.assert(
      fc.property(stream, (datas) => {
        const expected = reference(datas);
        expect(translated(datas, false)).toEqual(expected);
        expect(translated(datas, true)).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('keeps text that arrives while a call waits for its name for after the calls, as the state machine does', () => {
    const call = (delta: Record<string, unknown>) =>
      JSON.stringify(envelope([{ index: 0, delta: { tool_calls: [delta] }, finish_reason: null }]));
    const datas = [
      textChunk('Looking'),
      textChunk(' it up'),
      call({ index: 0, function: { arguments: '' } }),
      textChunk(' later text'),
      call({ index: 0, id: 'call_1', function: { name: 'lookup', arguments: '{}' } }),
      JSON.stringify(envelope([{ index: 0, delta: {}, finish_reason: 'tool_calls' }])),
      '[DONE]',
    ];
    const expected = reference(datas);
    expect(JSON.stringify(expected)).toContain('later text');
    expect(translated(datas, false)).toEqual(expected);
    expect(translated(datas, true)).toEqual(expected);
  });

  it('reads most chunks of a long plain stream by shape (one JSON.parse per chunk otherwise)', () => {
    const datas = [textChunk('')];
    for (let index = 0; index < 20; index++) datas.push(textChunk(`word ${index} `));
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      parses += 1;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      translated(datas, false);
    } finally {
      JSON.parse = parse;
    }
    // the first two chunks parsed whole, and the shape checked once
    expect(parses).toBe(3);
  });
});
