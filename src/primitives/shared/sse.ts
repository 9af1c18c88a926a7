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

/** What a forwarder does with the upstream's events. */
export interface SseForwardHandlers {
  /**
   * Whether an event of this name goes to the client exactly as it came. Asked only for an event in
   * the canonical form (`event: <name>\ndata: <data>\n\n`, the form `encodeSseEvent` writes), so
   * forwarding its bytes is what decoding it and encoding it again would write. The answer for a
   * name may change only when `event` is called: the forwarder asks once per name in between.
   */
  forwards(name: string): boolean;
  /** Forwarded bytes (whole events, in order), as text. */
  raw(text: string): void;
  /** Every other event, decoded (as `createSseDecoder` would). */
  event(event: SseEvent): void;
}

const CR = 0x0d;
const LF = 0x0a;
const BLANK_LINE = Buffer.from('\n\n');
const EVENT_FIELD = 'event: ';
const DATA_FIELD = 'data: ';
const DATA_FIELD_FIRST = 0x64;
/** Bytes of an unfinished event kept by the fast reader before it hands the stream to the full decoder. */
const MAX_PENDING = 64 * 1024;

/**
 * The stream path's fast reader: splits the upstream bytes at event boundaries without parsing
 * them. An event in the canonical form whose name `forwards` accepts is passed on as the same
 * text (runs of such events as one piece of text); a canonical event it does not accept, and a
 * data-only event of one `data: ` line (the chat wire's), is cut into its name and data directly
 * (with `forwards` always false, this is a faster `createSseDecoder` for such streams); anything else (comments, `id:`, multi-line data) goes through the full decoder above, one whole event at a time. A stream that carries a
 * CR byte (CRLF or CR line ends), starts with a byte-order mark or has an event longer than 64 KiB
 * is decoded by the full decoder from there on (an unfinished event is not copied again per
 * chunk), so the events are the ones `createSseDecoder` gives in every case, and a half-written
 * last event is dropped the same way.
 *
 * Each chunk is decoded to text once, up to its last blank line (an LF byte never sits inside a
 * multi-byte UTF-8 character, so the text ends on a whole character), and cut with string
 * searches: a few calls into the runtime per chunk rather than several per event.
 */
export function createSseForwarder(handlers: SseForwardHandlers): SseDecoder {
  // The full decoder (a TextDecoder and a parser) is made when a stream first needs it: most never do.
  let fullDecoder: SseDecoder | undefined;
  const full = (): SseDecoder => {
    fullDecoder ??= createSseDecoder((event) => handlers.event(event));
    return fullDecoder;
  };
  let slow = false;
  let first = true;
  let pending: Buffer | undefined;
  /** The last name `forwards` was asked about ('' after an event was handed over) and its answer. */
  let asked = '';
  let answer = false;
  return {
    feed(input) {
      const chunk = Buffer.isBuffer(input)
        ? input
        : typeof input === 'string'
          ? Buffer.from(input)
          : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
      if (first && chunk.length > 0) {
        first = false;
        if (chunk[0] === 0xef) slow = true;
      }
      if (!slow && chunk.indexOf(CR) !== -1) {
        slow = true;
        if (pending) full().feed(pending);
        pending = undefined;
      }
      if (slow) {
        full().feed(chunk);
        return;
      }
      const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
      const last = bytes.lastIndexOf(BLANK_LINE);
      const whole = last === -1 ? 0 : last + 2;
      if (whole > 0) read(bytes.toString('utf8', 0, whole));
      pending = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
      if (pending !== undefined && pending.length > MAX_PENDING) {
        // An event this large is rare; the full decoder reads it without copying it again per chunk.
        slow = true;
        full().feed(pending);
        pending = undefined;
      }
    },
    end() {
      // A dangling partial event is dropped (see the decoder above).
      pending = undefined;
      fullDecoder?.end();
    },
  };

  /**
   * Whole events (the text ends with a blank line), in order. The last name `forwards` was asked
   * about and its answer are kept until an event is handed over, so a run of content events of one
   * name costs one question and no copy of its name. A canonical event is scanned once: the end of
   * its data line, followed by an empty line, is its end. Only another event is searched for its
   * blank line.
   */
  function read(text: string): void {
    let start = 0;
    let run = -1;
    while (start < text.length) {
      if (text.charCodeAt(start) === DATA_FIELD_FIRST && text.startsWith(DATA_FIELD, start)) {
        // A data-only event in the canonical form (`data: <data>\n\n`, the chat wire's): cut directly.
        const lineEnd = text.indexOf('\n', start);
        if (lineEnd === -1) break;
        if (text.charCodeAt(lineEnd + 1) === LF) {
          if (run !== -1) handlers.raw(text.slice(run, start));
          run = -1;
          asked = '';
          handlers.event({ data: text.slice(start + DATA_FIELD.length, lineEnd) });
          start = lineEnd + 2;
          continue;
        }
      }
      const nameStart = start + EVENT_FIELD.length;
      const split = text.startsWith(EVENT_FIELD, start) ? text.indexOf('\n', start) : -1;
      // The first LF after `event: <name>\ndata: ` ends the data line; an LF right after it ends
      // the event: no blank line comes earlier (the name line ends with an LF followed by `d`).
      const lineEnd =
        split > nameStart && text.startsWith(DATA_FIELD, split + 1) ? text.indexOf('\n', split + 1) : -1;
      const canonical = lineEnd !== -1 && text.charCodeAt(lineEnd + 1) === LF;
      const end = canonical ? lineEnd : text.indexOf('\n\n', start);
      if (end === -1) break;
      const next = end + 2;
      if (canonical && forwarded(text, nameStart, split)) {
        if (run === -1) run = start;
      } else {
        if (run !== -1) handlers.raw(text.slice(run, start));
        run = -1;
        asked = '';
        if (canonical)
          handlers.event({
            event: text.slice(nameStart, split),
            data: text.slice(split + 1 + DATA_FIELD.length, end),
          });
        else full().feed(text.slice(start, next));
      }
      start = next;
    }
    if (run !== -1) handlers.raw(text.slice(run, start));
  }

  /** `forwards` for the name text[from, to), asked only when it differs from the last name asked. */
  function forwarded(text: string, from: number, to: number): boolean {
    // A slice compared whole: optimized code runs startsWith character by character.
    if (asked.length !== to - from || text.slice(from, to) !== asked) {
      asked = text.slice(from, to);
      answer = handlers.forwards(asked);
    }
    return answer;
  }
}

/** `forwards` for a stream none of whose events go to the client as they came. */
export const forwardsNothing = (_name: string): boolean => false;

/**
 * The events `createSseDecoder` gives, read by the fast reader: canonical (`event:` + one `data:`
 * line) and data-only events are cut with string searches instead of the spec parser.
 */
export function createFastSseDecoder(onEvent: (event: SseEvent) => void): SseDecoder {
  return createSseForwarder({ forwards: forwardsNothing, raw: () => {}, event: onEvent });
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
  // Two searches for one character: about 50 ns on a 430-byte event, the regular expression /[\r\n]/ 640.
  if (!data.includes('\n') && !data.includes('\r')) return `${head}data: ${data}\n\n`;
  return `${head}${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}

/** A client frame as written to the gateway's client: `event: <name>\ndata: <json>\n\n`. */
export function encodeFrame(frame: ClientFrame): string {
  return encodeSseEvent(frame.event, frame.data);
}
