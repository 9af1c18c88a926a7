/**
 * The one SSE decoder and the one SSE encoder of the project.
 *
 * Decoding: upstream body chunks (bytes) -> UTF-8 text (a streaming TextDecoder, so a multi-byte
 * character split across chunks is decoded once whole) -> eventsource-parser (spec-faithful field
 * parsing, CR/LF/CRLF line ends, multi-line data, comments) -> `SseEvent`. Primitives only ever see
 * parsed events, never bytes. An event the upstream did not terminate with a blank line before the
 * body ended is discarded, as the SSE specification says: a half-written event is a truncation, and
 * the stream translator reports it as an incomplete stream rather than parsing half a JSON value.
 *
 * Encoding: `event: <name>\ndata: <json>\n\n`.
 */
import { createParser } from 'eventsource-parser';
import type { ClientFrame, SseEvent } from './types.js';

export interface SseDecoder {
  /** Feed one body chunk; `onEvent` is called synchronously for each event it completes. */
  feed(chunk: Uint8Array | string): void;
  /** The body ended: flush the UTF-8 decoder (a dangling partial event is dropped, see above). */
  end(): void;
}

export function createSseDecoder(onEvent: (event: SseEvent) => void): SseDecoder {
  const text = new TextDecoder('utf-8');
  const parser = createParser({
    onEvent: (message) => {
      onEvent(
        message.event === undefined ? { data: message.data } : { event: message.event, data: message.data },
      );
    },
  });
  return {
    feed(chunk) {
      const decoded = typeof chunk === 'string' ? chunk : text.decode(chunk, { stream: true });
      if (decoded.length > 0) parser.feed(decoded);
    },
    end() {
      const rest = text.decode();
      if (rest.length > 0) parser.feed(rest);
      parser.reset();
    },
  };
}

/** Turns an upstream body (undici `response.body`, a Node stream, any async iterable of bytes) into events. */
export async function* readSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const pending: SseEvent[] = [];
  const decoder = createSseDecoder((event) => pending.push(event));
  for await (const chunk of body) {
    decoder.feed(chunk);
    if (pending.length > 0) yield* drain(pending);
  }
  decoder.end();
  if (pending.length > 0) yield* drain(pending);
}

function* drain(pending: SseEvent[]): Generator<SseEvent> {
  // Copy first: the consumer may resume the generator only after more events were queued.
  const batch = pending.splice(0, pending.length);
  for (const event of batch) yield event;
}

/** One named SSE event. Data containing line breaks is split over several `data:` lines. */
export function encodeSseEvent(event: string | undefined, data: string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  if (!/[\r\n]/.test(data)) return `${head}data: ${data}\n\n`;
  return `${head}${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}

/** A client frame as written to the gateway's client: `event: <name>\ndata: <json>\n\n`. */
export function encodeFrame(frame: ClientFrame): string {
  return encodeSseEvent(frame.event, frame.data);
}
