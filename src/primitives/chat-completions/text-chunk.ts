/**
 * The chat stream's common chunk, one text delta and nothing else, read without parsing the whole
 * chunk. Most of a chat stream's chunks differ only in their text (the id, created, model and the
 * rest repeat), and JSON.parse of each whole chunk was most of the stream translator's work.
 *
 * A stream's first such chunk, parsed as usual, gives its shape: the text before and after the
 * delta's `content` string. The shape is kept only when the same text with another string in that
 * place parses to the same plain text chunk carrying that string (so the place is the delta's
 * content and nothing else, whatever the rest of the chunk holds). A later chunk that is the same
 * text around one JSON string is then, by the JSON grammar, the same chunk with that text: it is
 * read by parsing the string alone. Any other chunk (another shape, whitespace, a finish reason,
 * usage, tool calls) goes through JSON.parse as before.
 */
import { isChatUsage } from './usage.js';

/** The text around a plain text chunk's `content` string. */
export interface TextChunkShape {
  prefix: string;
  suffix: string;
}

/** Where a compact chunk's content string starts (the shape is checked by parsing, see above). */
const CONTENT_AT = '"delta":{"content":';
/** Another string put in the content's place to check the shape: a NUL, which no real text starts with. */
const PROBE = '"\\u0000"';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of a chunk the translator reads as one text delta and nothing else: no error, no usage,
 * one choice (index 0) without a finish reason, whose delta holds only `content`; otherwise undefined.
 */
export function plainText(chunk: unknown): string | undefined {
  if (!isRecord(chunk) || (chunk.error !== undefined && chunk.error !== null) || isChatUsage(chunk.usage))
    return undefined;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice: unknown = choices[0];
  if (!isRecord(choice) || choice.index !== 0) return undefined;
  if (choice.finish_reason !== undefined && choice.finish_reason !== null) return undefined;
  const delta = choice.delta;
  if (!isRecord(delta)) return undefined;
  const keys = Object.keys(delta);
  if (keys.length !== 1 || keys[0] !== 'content' || typeof delta.content !== 'string') return undefined;
  return delta.content;
}

/** The index just past the JSON string that starts at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  if (text.charCodeAt(start) !== QUOTE) return -1;
  for (let index = start + 1; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === BACKSLASH) index++;
    else if (code === QUOTE) return index + 1;
  }
  return -1;
}

/** The shape of `data`, a chunk that parsed to `chunk`, when it is a plain text chunk whose text can be cut out. */
export function textChunkShape(data: string, chunk: unknown): TextChunkShape | undefined {
  if (plainText(chunk) === undefined) return undefined;
  const at = data.indexOf(CONTENT_AT);
  if (at === -1 || data.indexOf(CONTENT_AT, at + 1) !== -1) return undefined;
  const start = at + CONTENT_AT.length;
  const end = stringEnd(data, start);
  if (end === -1) return undefined;
  const shape = { prefix: data.slice(0, start), suffix: data.slice(end) };
  let probe: unknown;
  try {
    probe = JSON.parse(shape.prefix + PROBE + shape.suffix);
  } catch {
    return undefined;
  }
  return plainText(probe) === '\u0000' ? shape : undefined;
}

/** The text of `data` when it is a chunk of `shape` (the same text around one JSON string); otherwise undefined. */
export function shapedText(shape: TextChunkShape, data: string): string | undefined {
  const { prefix, suffix } = shape;
  const end = data.length - suffix.length;
  // Equality of slices, not startsWith/endsWith: optimized code compares those character by
  // character, several times slower on a chunk's 200-character prefix.
  if (end - prefix.length < 2 || data.slice(0, prefix.length) !== prefix || data.slice(end) !== suffix)
    return undefined;
  if (data.charCodeAt(prefix.length) !== QUOTE || data.charCodeAt(end - 1) !== QUOTE) return undefined;
  // Most texts hold no quote, backslash or control character: the string's text is its inside.
  let plain = true;
  for (let index = prefix.length + 1; index < end - 1 && plain; index++) {
    const code = data.charCodeAt(index);
    plain = code >= 0x20 && code !== QUOTE && code !== BACKSLASH;
  }
  if (plain) return data.slice(prefix.length + 1, end - 1);
  let text: unknown;
  try {
    text = JSON.parse(data.slice(prefix.length, end));
  } catch {
    return undefined;
  }
  return typeof text === 'string' ? text : undefined;
}
