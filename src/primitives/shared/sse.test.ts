import { describe, expect, it } from 'vitest';
import { createSseDecoder, encodeFrame, encodeSseEvent, readSse } from './sse.js';
import type { SseEvent } from './types.js';

const encoder = new TextEncoder();

async function* chunks(parts: Array<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const part of parts) yield part;
}

async function collect(parts: Array<Uint8Array | string>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(chunks(parts))) events.push(event);
  return events;
}

const STREAM =
  'event: message_start\ndata: {"type":"message_start","text":"héllo ☃ 😀"}\n\n' +
  ': a comment line\n\n' +
  'event: ping\ndata: {"type":"ping"}\n\n' +
  'data: {"choices":[]}\n\n' +
  'event: content_block_delta\r\ndata: {"a":1}\r\n\r\n' +
  'event: multi\ndata: line one\ndata: line two\n\n';

const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"type":"message_start","text":"héllo ☃ 😀"}' },
  { event: 'ping', data: '{"type":"ping"}' },
  { data: '{"choices":[]}' },
  { event: 'content_block_delta', data: '{"a":1}' },
  { event: 'multi', data: 'line one\nline two' },
];

describe('readSse', () => {
  it('parses named, data-only, CRLF and multi-line events and skips comments', async () => {
    expect(await collect([encoder.encode(STREAM)])).toEqual(EXPECTED);
  });

  it('gives the same events when the bytes are split at every boundary', async () => {
    const bytes = encoder.encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut++) {
      const events = await collect([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(events, `cut at byte ${cut}`).toEqual(EXPECTED);
    }
  });

  it('gives the same events when every byte is its own chunk (multi-byte UTF-8 split)', async () => {
    const bytes = encoder.encode(STREAM);
    const single = Array.from(bytes, (_, index) => bytes.subarray(index, index + 1));
    expect(await collect(single)).toEqual(EXPECTED);
  });

  it('decodes a 4-byte character split across three chunks', async () => {
    const bytes = encoder.encode('event: x\ndata: 😀\n\n');
    const at = bytes.indexOf(0xf0);
    const events = await collect([
      bytes.subarray(0, at + 1),
      bytes.subarray(at + 1, at + 3),
      bytes.subarray(at + 3),
    ]);
    expect(events).toEqual([{ event: 'x', data: '😀' }]);
  });

  it('drops an event the body ended before terminating', async () => {
    const events = await collect([encoder.encode('event: a\ndata: 1\n\nevent: b\ndata: {"trunc')]);
    expect(events).toEqual([{ event: 'a', data: '1' }]);
  });

  it('accepts string chunks', async () => {
    expect(await collect(['event: a\nda', 'ta: 1\n\n'])).toEqual([{ event: 'a', data: '1' }]);
  });
});

describe('createSseDecoder', () => {
  it('calls back synchronously per completed event', () => {
    const seen: SseEvent[] = [];
    const decoder = createSseDecoder((event) => seen.push(event));
    decoder.feed(encoder.encode('event: a\ndata: 1\n'));
    expect(seen).toEqual([]);
    decoder.feed(encoder.encode('\nevent: b\ndata: 2\n\n'));
    expect(seen).toEqual([
      { event: 'a', data: '1' },
      { event: 'b', data: '2' },
    ]);
    decoder.end();
  });
});

describe('encoder', () => {
  it('writes a named event', () => {
    expect(encodeFrame({ event: 'ping', data: '{"type":"ping"}' })).toBe(
      'event: ping\ndata: {"type":"ping"}\n\n',
    );
  });

  it('writes data-only events and splits multi-line data', () => {
    expect(encodeSseEvent(undefined, '[DONE]')).toBe('data: [DONE]\n\n');
    expect(encodeSseEvent('m', 'a\nb')).toBe('event: m\ndata: a\ndata: b\n\n');
  });

  it('round-trips through the decoder', async () => {
    const text =
      encodeSseEvent('m', 'a\nb') + encodeFrame({ event: 'message_stop', data: '{"type":"message_stop"}' });
    expect(await collect([text])).toEqual([
      { event: 'm', data: 'a\nb' },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ]);
  });
});
