import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFastSseDecoder,
  createSseDecoder,
  createSseForwarder,
  encodeFrame,
  encodeSseEvent,
  readSse,
} from './sse.js';
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

describe('createSseForwarder', () => {
  type Seen = { raw: string } | { event: SseEvent };
  const FORWARDED = new Set(['content_block_delta', 'ping']);

  function forward(parts: Uint8Array[]): Seen[] {
    const seen: Seen[] = [];
    const forwarder = createSseForwarder({
      forwards: (name) => FORWARDED.has(name),
      raw: (text) => seen.push({ raw: text }),
      event: (event) => seen.push({ event }),
    });
    for (const part of parts) forwarder.feed(part);
    forwarder.end();
    return seen;
  }

  /** The events the forwarder gave, forwarded bytes decoded again: they must be the decoder's events. */
  function decoded(seen: Seen[]): SseEvent[] {
    const events: SseEvent[] = [];
    const decoder = createSseDecoder((event) => events.push(event));
    for (const item of seen) {
      if ('raw' in item) decoder.feed(item.raw);
      else events.push(item.event);
    }
    decoder.end();
    return events;
  }

  function reference(bytes: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    const decoder = createSseDecoder((event) => events.push(event));
    decoder.feed(bytes);
    decoder.end();
    return events;
  }

  const LF_STREAM =
    '\n\nevent: message_start\ndata: {"type":"message_start","text":"héllo ☃ 😀"}\n\n' +
    'event: ping\ndata: {"type": "ping"}\n\n' +
    'event: content_block_delta\ndata: {"delta":"😀 ☃ é"}\n\n' +
    'event: content_block_delta\ndata:  two spaces\n\n' +
    ': a comment line\n\n' +
    'event: content_block_delta\nid: 7\ndata: {"with":"id"}\n\n' +
    'data: {"choices":[]}\n\n' +
    'event: \ndata: empty name\n\n' +
    'event:content_block_delta\ndata:{"no":"spaces"}\n\n' +
    'event: multi\ndata: line one\ndata: line two\n\n\n\n' +
    'event: content_block_delta\ndata: {"last":true}\n\n' +
    'event: message_stop\ndata: {"type":"message_stop"}\n\n' +
    'event: content_block_delta\ndata: {"trunc';

  it("gives the decoder's events, forwarding canonical events of accepted names as their own bytes", () => {
    const bytes = encoder.encode(LF_STREAM);
    const expected = reference(bytes);
    expect(expected.map((event) => event.event)).toContain('multi');
    const seen = forward([bytes]);
    expect(decoded(seen)).toEqual(expected);
    const raw = seen.flatMap((item) => ('raw' in item ? [item.raw] : []));
    expect(raw).toEqual([
      'event: ping\ndata: {"type": "ping"}\n\n' +
        'event: content_block_delta\ndata: {"delta":"😀 ☃ é"}\n\n' +
        'event: content_block_delta\ndata:  two spaces\n\n',
      'event: content_block_delta\ndata: {"last":true}\n\n',
    ]);
    for (const text of raw) expect(LF_STREAM).toContain(text);
  });

  it('gives the same events however the bytes are split (at every byte, and byte by byte)', () => {
    const bytes = encoder.encode(LF_STREAM);
    const expected = reference(bytes);
    for (let cut = 1; cut < bytes.length; cut++) {
      const seen = forward([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(decoded(seen), `cut at byte ${cut}`).toEqual(expected);
    }
    const single = Array.from(bytes, (_, index) => bytes.subarray(index, index + 1));
    expect(decoded(forward(single))).toEqual(expected);
  });

  it('decodes CRLF and CR streams, a CR arriving after forwarded events, and a byte-order mark, like the decoder', () => {
    const lf = 'event: content_block_delta\ndata: {"a":1}\n\n';
    const streams = [
      STREAM,
      lf + 'event: content_block_delta\r\ndata: {"b":2}\r\n\r\n' + lf,
      lf + 'event: content_block_delta\rdata: {"c":3}\r\r' + lf,
      `\uFEFF${lf}${lf}`,
    ];
    for (const text of streams) {
      const bytes = encoder.encode(text);
      const expected = reference(bytes);
      for (let cut = 1; cut < bytes.length; cut++) {
        const seen = forward([bytes.subarray(0, cut), bytes.subarray(cut)]);
        expect(decoded(seen), `${JSON.stringify(text)} cut at byte ${cut}`).toEqual(expected);
      }
    }
  });

  it('hands a stream with an event over 64 KiB to the full decoder, with the same events', () => {
    const big = `event: content_block_delta\ndata: {"text":"${'é'.repeat(100_000)}"}\n\n`;
    const text = `event: content_block_delta\ndata: 1\n\n${big}event: ping\ndata: 2\n\n`;
    const bytes = encoder.encode(text);
    const parts: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 4093) parts.push(bytes.subarray(at, at + 4093));
    const seen = forward(parts);
    expect(decoded(seen)).toEqual(reference(bytes));
    expect(seen[0]).toEqual({ raw: 'event: content_block_delta\ndata: 1\n\n' });
    expect(seen.filter((item) => 'raw' in item)).toHaveLength(1);
  });

  it('asks about a name once between handed-over events, and again after each (its answer may change)', () => {
    let open = false;
    const asked: string[] = [];
    const seen: Seen[] = [];
    const forwarder = createSseForwarder({
      forwards: (name) => {
        asked.push(name);
        return open && name !== 'stop';
      },
      raw: (text) => seen.push({ raw: text }),
      event: (event) => {
        seen.push({ event });
        open = event.event === 'start';
      },
    });
    const delta = (n: number) => `event: delta\ndata: ${n}\n\n`;
    const ping = 'event: ping\ndata: p\n\n';
    forwarder.feed(
      encoder.encode(
        `${delta(1)}event: start\ndata: s\n\n${delta(2)}${delta(3)}${ping}${delta(4)}event: stop\ndata: x\n\n${delta(5)}`,
      ),
    );
    forwarder.end();
    expect(seen).toEqual([
      { event: { event: 'delta', data: '1' } },
      { event: { event: 'start', data: 's' } },
      { raw: `${delta(2)}${delta(3)}${ping}${delta(4)}` },
      { event: { event: 'stop', data: 'x' } },
      { event: { event: 'delta', data: '5' } },
    ]);
    expect(asked).toEqual(['delta', 'start', 'delta', 'ping', 'delta', 'stop', 'delta']);
  });

  it("gives the decoder's events for any stream made of SSE lines, cut anywhere", () => {
    const line = fc.constantFrom(
      'event: content_block_delta\n',
      'event: ping\n',
      'event: other\n',
      'event: \n',
      'event:ping\n',
      'data: {"a":1}\n',
      'data: \n',
      'data:x\n',
      'data: two\n',
      'id: 3\n',
      ': comment\n',
      'retry: 5\n',
      '\n',
      'event: content_block_delta\ndata: {"d":"é"}\n\n',
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.nat(), (lines, at) => {
        const bytes = encoder.encode(lines.join(''));
        const cut = bytes.length === 0 ? 0 : at % bytes.length;
        const expected = reference(bytes);
        expect(decoded(forward([bytes]))).toEqual(expected);
        expect(decoded(forward([bytes.subarray(0, cut), bytes.subarray(cut)]))).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it("createFastSseDecoder: a chat stream's data-only events cut directly, the decoder's events for anything", () => {
    const chat =
      'data: {"choices":[{"delta":{"content":"é ☃"}}]}\n\ndata: \n\ndata: a\ndata: b\n\n: c\n\ndata: [DONE]\n\n';
    fc.assert(
      fc.property(fc.nat(), (at) => {
        const bytes = encoder.encode(chat + LF_STREAM);
        const cut = at % bytes.length;
        const events: SseEvent[] = [];
        const fast = createFastSseDecoder((event) => events.push(event));
        fast.feed(bytes.subarray(0, cut));
        fast.feed(bytes.subarray(cut));
        fast.end();
        expect(events).toEqual(reference(bytes));
      }),
      { numRuns: 500 },
    );
    expect(reference(encoder.encode(chat)).map((event) => event.data)).toEqual([
      '{"choices":[{"delta":{"content":"é ☃"}}]}',
      '',
      'a\nb',
      '[DONE]',
    ]);
  });

  it('forwards nothing its handler refuses, and a run of accepted events as one piece per chunk', () => {
    const text = 'event: ping\ndata: 1\n\nevent: ping\ndata: 2\n\nevent: other\ndata: 3\n\n';
    expect(forward([encoder.encode(text)])).toEqual([
      { raw: 'event: ping\ndata: 1\n\nevent: ping\ndata: 2\n\n' },
      { event: { event: 'other', data: '3' } },
    ]);
  });
});
