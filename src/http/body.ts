/**
 * Body parsing for every route: JSON bodies are parsed here (a parse failure, or text the stores
 * cannot hold (input-guard.ts), is a 400 in the route's own dialect); any other content type arrives as a raw Buffer for the route to refuse or
 * stream. Multipart routes register their own parser.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { checkJsonBody } from './input-guard.js';

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const essence = header.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json';
}

export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (text === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text as string);
    } catch {
      return done(new GatewayError('invalid_request', 'The request body is not valid JSON.'), undefined);
    }
    try {
      checkJsonBody(text as string, parsed, request.url);
    } catch (error) {
      return done(error as GatewayError, undefined);
    }
    done(null, parsed);
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}
