/**
 * Attributes for attribution (docs/request-log.md): `metadata` on Work Units and Runs and the
 * `Svc-Tags` header of model calls. The limits live here, once; every bad value is a GatewayError
 * invalid_request naming its field (`metadata.<key>`) or header (`svc-tags`), rendered in the
 * dialect of the endpoint that read it.
 *
 * Limits:
 * - metadata: at most 16 keys; key 1-64 characters `^[A-Za-z][A-Za-z0-9_.-]{0,63}$`; value a string
 *   of 0-256 characters without control characters (U+0000-U+001F, U+007F).
 * - tags: `Svc-Tags: key=value, key2=value2` (items separated by commas, spaces around items and
 *   around `=` ignored); at most 10 pairs, keys as metadata keys and each once, value 1-128
 *   characters of `[A-Za-z0-9_.:/@+-]`; the header at most 2048 bytes.
 * - list filters `metadata.<key>=<value>` / `tag.<key>=<value>`: the same key and value rules.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Attributes } from '../store/records.js';

export const ATTRIBUTE_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const METADATA_MAX_KEYS = 16;
export const METADATA_MAX_VALUE = 256;
export const TAGS_MAX_PAIRS = 10;
export const TAG_VALUE = /^[A-Za-z0-9_.:/@+-]{1,128}$/;
export const TAGS_MAX_BYTES = 2048;
export const TAGS_HEADER = 'svc-tags';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters refused are control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${message}`, { param });
}

/** A key's problem, or undefined when it is a legal attribute key. */
function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'the key is empty';
  if (key.length > 64) return 'the key is longer than 64 characters';
  if (!ATTRIBUTE_KEY.test(key))
    return 'the key must start with a letter and hold only letters, digits, _ . -';
  return undefined;
}

/** A metadata value's problem, or undefined. */
function metadataValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'the value must be a string';
  if (value.length > METADATA_MAX_VALUE) return `the value is longer than ${METADATA_MAX_VALUE} characters`;
  if (CONTROL.test(value)) return 'the value holds a control character';
  return undefined;
}

/**
 * The `metadata` of a create body: undefined when absent, otherwise a checked copy. Throws
 * invalid_request naming `metadata` or `metadata.<key>`.
 */
export function checkMetadata(value: unknown): Attributes | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalid('metadata', 'must be an object of string keys and string values');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_MAX_KEYS)
    throw invalid('metadata', `at most ${METADATA_MAX_KEYS} keys (got ${entries.length})`);
  const metadata: Attributes = {};
  for (const [key, item] of entries) {
    const problem = keyProblem(key) ?? metadataValueProblem(item);
    if (problem) throw invalid(`metadata.${key}`, problem);
    metadata[key] = item as string;
  }
  return metadata;
}

/**
 * The tags of a model call from its `Svc-Tags` header: null when absent (or blank). Throws
 * invalid_request naming `svc-tags` beyond the limits (see the header of this file).
 */
export function parseTags(header: string | string[] | undefined): Attributes | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (Buffer.byteLength(text) > TAGS_MAX_BYTES)
    throw invalid(TAGS_HEADER, `the header is longer than ${TAGS_MAX_BYTES} bytes`);
  if (text.trim() === '') return null;
  const tags: Attributes = {};
  let count = 0;
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') throw invalid(TAGS_HEADER, 'an empty item (two commas in a row, or a trailing comma)');
    const equals = item.indexOf('=');
    if (equals < 0) throw invalid(TAGS_HEADER, `item ${JSON.stringify(item)} is not key=value`);
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    const problem = keyProblem(key);
    if (problem) throw invalid(TAGS_HEADER, `${problem} (item ${JSON.stringify(item)})`);
    if (!TAG_VALUE.test(value))
      throw invalid(
        TAGS_HEADER,
        `the value of ${key} must be 1-128 characters of letters, digits and _ . : / @ + -`,
      );
    if (Object.hasOwn(tags, key)) throw invalid(TAGS_HEADER, `key ${key} appears more than once`);
    count += 1;
    if (count > TAGS_MAX_PAIRS) throw invalid(TAGS_HEADER, `at most ${TAGS_MAX_PAIRS} pairs`);
    tags[key] = value;
  }
  return tags;
}

/**
 * The attribute filters of a list query: every `<prefix>.<key>=<value>` parameter (for example
 * `metadata.team=search`), ANDed. A repeated parameter, a bad key or value is invalid_request
 * naming the parameter. `valueRule` checks the value (metadata values or tag values).
 */
export function attributeFilters(
  query: Record<string, unknown>,
  prefix: 'metadata' | 'tag',
): Attributes | undefined {
  let filters: Attributes | undefined;
  for (const [name, raw] of Object.entries(query)) {
    if (!name.startsWith(`${prefix}.`)) continue;
    const key = name.slice(prefix.length + 1);
    if (typeof raw !== 'string') throw invalid(name, 'give the parameter once');
    const problem =
      keyProblem(key) ??
      (prefix === 'tag'
        ? TAG_VALUE.test(raw)
          ? undefined
          : 'the value must be 1-128 characters of letters, digits and _ . : / @ + -'
        : metadataValueProblem(raw));
    if (problem) throw invalid(name, problem);
    filters ??= {};
    filters[key] = raw;
  }
  return filters;
}
