/**
 * Body parsing for every route: JSON bodies are parsed here (a parse failure, or text the stores
 * cannot hold (input-guard.ts), is a 400 in the route's own dialect); any other content type arrives as a raw Buffer for the route to refuse or
 * stream. Multipart routes register their own parser.
 *
 * Limits, checked before any validation, whether the body came with a content-length or chunked:
 * the size limit (limits.messages_body_bytes; 413 request_too_large, before parsing) and a nesting
 * depth of at most MAX_JSON_DEPTH arrays and objects (400 invalid_request; before parsing for large
 * bodies, right after it for small ones). Deeper bodies cannot be validated, priced or serialised
 * upstream without exhausting the stack.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { checkJsonBody } from './input-guard.js';

/** The deepest nesting of arrays and objects a JSON body may have (docs/decisions.md, "HTTP input and client sockets"). */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Bodies up to this length (UTF-16 code units of the decoded text) are parsed before their depth is
 * checked (`valueNestsDeeperThan`): V8's JSON.parse does not recurse, so a body this small parses in
 * well under a millisecond however it nests, and walking the parsed value visits its few nodes
 * instead of its every character. Longer bodies are scanned first (`nestsDeeperThan`), so a deep one
 * is refused without a parse.
 */
const PARSE_FIRST_LENGTH = 64 * 1024;

function tooDeep(): GatewayError {
  return new GatewayError(
    'invalid_request',
    `The JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
  );
}

/** Whether a parsed JSON value nests arrays and objects deeper than `limit` (the walk goes at most `limit` + 1 deep). */
export function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (valueNestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value)
    if (valueNestsDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

/** Whether `text` nests arrays and objects deeper than `limit` (strings are skipped; one scan, no allocation). */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const essence = header.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json';
}

const jsonBytes = new WeakMap<FastifyRequest, number>();
/** The JSON text as the client sent it, kept only while some Project captures bodies (capture/). */
const jsonTexts = new WeakMap<FastifyRequest, string>();

/** The request's JSON body as sent, when the parsers keep it (registerBodyParsers keepJsonText). */
export function jsonTextOf(request: FastifyRequest): string | undefined {
  return jsonTexts.get(request);
}

/** The JSON body's size in bytes: its content-length, or (chunked) the bytes the parser read. */
export function jsonBodyBytes(request: FastifyRequest): number {
  const header = request.headers['content-length'];
  return header !== undefined ? Number(header) : (jsonBytes.get(request) ?? 0);
}

/** `keepJsonText`: remember each JSON body's text for body capture (jsonTextOf). */
export function registerBodyParsers(app: FastifyInstance, options: { keepJsonText?: boolean } = {}): void {
  const keepJsonText = options.keepJsonText ?? false;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (text === '') return done(null, undefined);
    const body = text as string;
    if (keepJsonText) jsonTexts.set(request, body);
    if (request.headers['content-length'] === undefined) jsonBytes.set(request, Buffer.byteLength(body));
    const small = body.length <= PARSE_FIRST_LENGTH;
    if (!small && nestsDeeperThan(body, MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return done(new GatewayError('invalid_request', 'The request body is not valid JSON.'), undefined);
    }
    if (small && valueNestsDeeperThan(parsed, MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    try {
      checkJsonBody(body, parsed, request.url);
    } catch (error) {
      return done(error as GatewayError, undefined);
    }
    done(null, parsed);
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}
