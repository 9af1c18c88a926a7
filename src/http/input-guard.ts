/**
 * One guard for text the gateway cannot store or forward faithfully (issue 10): a NUL character
 * (U+0000; PostgreSQL text cannot hold it, so the two stores used to disagree) and unpaired UTF-16
 * surrogates (no UTF-8 encoding exists for them). Checked once at the HTTP layer, before any use
 * case runs: path parameters and the query string in a preValidation hook, JSON bodies (every
 * string value and every object key, at any depth) where body.ts parses them, and multipart field
 * values, field names and file names in multipart-form.ts. A hit is a 400 in the endpoint's dialect
 * naming the field.
 *
 * In JSON text both characters can only arrive as \u escapes (JSON forbids a raw U+0000 in a
 * string, and UTF-8 decoding turns an encoded lone surrogate into U+FFFD), so a body whose text
 * has no such escape is not walked at all: the common request pays one search for `\u`, and only
 * a text holding one is scanned by the regular expression (on the benchmark's 1 KB body the search
 * takes 45-50 ns, the expression's scan 640-690 ns).
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point of this guard
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const ESCAPED_SUSPECT = /\\u(?:0000|[dD][89a-fA-F])/;

/** The error code of a malformed body on this path (the outcome endpoint has its own, DESIGN.md). */
export function invalidCodeFor(path: string): 'invalid_request' | 'invalid_outcome' {
  return /^\/svc\/v1\/work-units\/[^/]+\/outcomes$/.test(path) ? 'invalid_outcome' : 'invalid_request';
}

function problemOf(text: string): string | undefined {
  const found = UNSTORABLE.exec(text)?.[0];
  if (found === undefined) return undefined;
  return found === '\u0000'
    ? 'must not contain a NUL character (U+0000)'
    : 'must not contain an unpaired UTF-16 surrogate';
}

/** Throws a 400 when `text` (named `where`) holds a character the gateway cannot store. */
export function checkText(
  text: string,
  where: string,
  code: 'invalid_request' | 'invalid_outcome' = 'invalid_request',
): void {
  const problem = problemOf(text);
  if (problem !== undefined) throw new GatewayError(code, `${where}: ${problem}`, { param: where });
}

function child(where: string, key: string | number): string {
  if (typeof key === 'number') return `${where}[${key}]`;
  return where === '' ? key : `${where}.${key}`;
}

/** Walks a parsed JSON value without recursion (a deeply nested body cannot overflow the stack). */
export function checkJson(value: unknown, root: string, code: 'invalid_request' | 'invalid_outcome'): void {
  const pending: Array<[unknown, string]> = [[value, root]];
  while (pending.length > 0) {
    const [current, where] = pending.pop()!;
    if (typeof current === 'string') {
      checkText(current, where === '' ? 'body' : where, code);
    } else if (Array.isArray(current)) {
      for (const [index, item] of current.entries()) pending.push([item, child(where, index)]);
    } else if (current !== null && typeof current === 'object' && !Buffer.isBuffer(current)) {
      for (const [key, item] of Object.entries(current)) {
        checkText(key, `${child(where, key)} (a key)`, code);
        pending.push([item, child(where, key)]);
      }
    }
  }
}

/** Checks a JSON body parsed from `text` (sent to `path`); see the header for the fast path. */
export function checkJsonBody(text: string, parsed: unknown, path: string): void {
  if (text.includes('\\u') && ESCAPED_SUSPECT.test(text))
    checkJson(parsed, '', invalidCodeFor(path.split('?')[0]!));
}

export function registerInputGuard(app: FastifyInstance): void {
  // A callback hook (a throw is caught by fastify like a rejection): no promise per request.
  app.addHook('preValidation', (request, _reply, done) => {
    checkJson(request.params, '', 'invalid_request');
    checkJson(request.query, '', 'invalid_request');
    done();
  });
}
