import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { goldenFixtures, reassemble } from '../shared/golden-fixtures.js';
import { createSseDecoder, createSseForwarder, encodeFrame } from '../shared/sse.js';
import type { ClientFrame, SseEvent } from '../shared/types.js';
import { UpstreamProtocolError } from '../shared/types.js';
import { createMessagesStreamTranslator } from './stream.js';

const { context: FIXTURE_CONTEXT, events: fixtureEvents } = goldenFixtures('messages');

const START: SseEvent = {
  event: 'message_start',
  data: JSON.stringify({
    type: 'message_start',
    message: {
      id: 'msg_upstream',
      type: 'message',
      role: 'assistant',
      model: 'upstream-model',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 1, cache_read_input_tokens: 5 },
    },
  }),
};
const STOP: SseEvent = { event: 'message_stop', data: '{"type":"message_stop"}' };

function run(events: SseEvent[]) {
  const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
  const frames: ClientFrame[] = events.flatMap((event) => translator.push(event));
  return { frames, translator };
}

describe('messages stream translator', () => {
  it('forwards content events byte for byte and rewrites only message_start', () => {
    const delta = {
      event: 'content_block_delta',
      data: '{"type":"content_block_delta","index":0,  "delta":{}}',
    };
    const { frames } = run([START, delta]);
    expect(frames[1]).toEqual(delta);
    const start = JSON.parse(frames[0]!.data);
    expect(start.message.id).toBe(FIXTURE_CONTEXT.messageId);
    expect(start.message.model).toBe(FIXTURE_CONTEXT.responseModel);
    expect(start.message.usage).toEqual({ input_tokens: 30, output_tokens: 1, cache_read_input_tokens: 5 });
  });

  it('has no usage before message_start, then merges cumulative message_delta values', () => {
    const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
    expect(translator.usage()).toBeUndefined();
    translator.push(START);
    expect(translator.usage()).toEqual({
      input_tokens: 30,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 5,
    });
    translator.push({
      event: 'message_delta',
      data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":40,"input_tokens":null,"cache_read_input_tokens":7}}',
    });
    translator.push({
      event: 'message_delta',
      data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":42}}',
    });
    expect(translator.usage()).toEqual({
      input_tokens: 30,
      output_tokens: 42,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 7,
    });
  });

  it('is complete only after message_stop', () => {
    expect(run([START]).translator.end()).toEqual({ frames: [], complete: false });
    expect(run([START, STOP]).translator.end()).toEqual({ frames: [], complete: true });
  });

  it('ignores events after message_stop and drops unknown event names', () => {
    const { frames } = run([
      START,
      { event: 'future_event', data: '{}' },
      STOP,
      { event: 'ping', data: '{}' },
    ]);
    expect(frames.map((frame) => frame.event)).toEqual(['message_start', 'message_stop']);
  });

  it('reads data-only frames by their JSON type', () => {
    const { frames } = run([{ data: START.data }, { data: '{"type":"message_stop"}' }]);
    expect(frames.map((frame) => frame.event)).toEqual(['message_start', 'message_stop']);
  });

  it('drops a ping before message_start and refuses content before it', () => {
    expect(run([{ event: 'ping', data: '{"type":"ping"}' }]).frames).toEqual([]);
    expect(() => run([{ event: 'content_block_start', data: '{}' }])).toThrow(UpstreamProtocolError);
    expect(() => run([{ event: 'message_delta', data: '{}' }])).toThrow(UpstreamProtocolError);
  });

  it('refuses a second message_start and a message_start that is not JSON', () => {
    expect(() => run([START, START])).toThrow(/second message_start/);
    expect(() => run([{ event: 'message_start', data: '{"type":' }])).toThrow(UpstreamProtocolError);
  });

  it('forwards a well-formed error and rewrites a foreign one; the stream is then incomplete', () => {
    const known = {
      event: 'error',
      data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    };
    const first = run([START, known]);
    expect(first.frames[1]).toEqual(known);
    expect(first.translator.end().complete).toBe(false);
    const foreign = run([
      START,
      { event: 'error', data: '{"type":"error","error":{"type":"timeout_error","message":"slow"}}' },
    ]);
    expect(JSON.parse(foreign.frames[1]!.data)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'slow' },
    });
    const garbage = run([{ event: 'error', data: 'boom' }]);
    expect(JSON.parse(garbage.frames[0]!.data).error.type).toBe('api_error');
  });
});

describe('SDK accumulator over the forwarded frames', () => {
  it('reassembles the final message from the tool-use stream', async () => {
    const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
    const frames = (await fixtureEvents('stream-tool-use.sse')).flatMap((event) => translator.push(event));
    const message = await reassemble(frames);
    expect(message).toMatchObject({
      id: FIXTURE_CONTEXT.messageId,
      model: FIXTURE_CONTEXT.responseModel,
      stop_reason: 'tool_use',
      content: [
        { type: 'thinking', thinking: 'Need the weather tool.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool_use',
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          name: 'get_weather',
          input: { city: 'Paris', units: 'metric' },
        },
      ],
      usage: {
        input_tokens: 472,
        output_tokens: 89,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 0,
      },
    });
    expect(translator.usage()).toEqual({
      input_tokens: 472,
      output_tokens: 89,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 0,
    });
  });
});

describe("forwarded bytes (the stream path when the upstream speaks the client's wire)", () => {
  it('names only the content events of the streaming phase', () => {
    const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
    const content = ['content_block_start', 'content_block_delta', 'content_block_stop', 'ping'];
    const others = ['message_start', 'message_delta', 'message_stop', 'error', 'future_event'];
    for (const name of [...content, ...others]) expect(translator.forwards!(name), name).toBe(false);
    translator.push(START);
    for (const name of content) expect(translator.forwards!(name), name).toBe(true);
    for (const name of others) expect(translator.forwards!(name), name).toBe(false);
    translator.push(STOP);
    for (const name of content) expect(translator.forwards!(name), name).toBe(false);
  });

  /** The client text and usage of one upstream body, decoded and translated event by event or forwarded. */
  function clientText(bytes: Uint8Array, chunk: number, fast: boolean) {
    const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
    let text = '';
    const onEvent = (event: SseEvent) => {
      for (const frame of translator.push(event)) text += encodeFrame(frame);
    };
    const reader = fast
      ? createSseForwarder({
          forwards: (name) => translator.forwards!(name),
          raw: (raw) => {
            text += raw;
          },
          event: onEvent,
        })
      : createSseDecoder(onEvent);
    for (let at = 0; at < bytes.length; at += chunk) reader.feed(bytes.subarray(at, at + chunk));
    reader.end();
    return { text, end: translator.end(), usage: translator.usage() };
  }

  it('writes exactly what decoding, translating and encoding every event writes, for every fixture', () => {
    for (const name of [
      'stream-text.sse',
      'stream-tool-use.sse',
      'stream-error.sse',
      'stream-truncated.sse',
    ]) {
      const bytes = readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));
      for (const chunk of [1, 7, 37, bytes.length]) {
        const expected = clientText(bytes, chunk, false);
        expect(expected.text.length, name).toBeGreaterThan(0);
        expect(clientText(bytes, chunk, true), `${name} in chunks of ${chunk}`).toEqual(expected);
      }
    }
  });
});
