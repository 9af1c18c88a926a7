/**
 * /v1/messages and /v1/messages/count_tokens. Thin: authenticate, hand the parsed body to the
 * use case, and write JSON or a server-sent event stream (piped with backpressure; a client that
 * goes away aborts the upstream request).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { CountTokensService } from '../gateway/count-tokens-service.js';
import type { MessagesService } from '../gateway/messages-service.js';
import type { Authenticator } from './auth.js';
import { isJsonContentType } from './body.js';

export interface MessagesRouteDeps {
  authenticator: Authenticator;
  messages: MessagesService;
  countTokens: CountTokensService;
}

function jsonBody(request: FastifyRequest): unknown {
  if (!isJsonContentType(request.headers['content-type']) || Buffer.isBuffer(request.body)) {
    throw new GatewayError('invalid_request', 'Content-Type must be application/json.');
  }
  if (request.body === undefined)
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  return request.body;
}

/** An AbortSignal that fires when the client closes the connection before the response finished. */
function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  app.post('/v1/messages', async (request, reply) => {
    const caller = await deps.authenticator.authenticate(request.headers);
    const body = jsonBody(request);
    const outcome = await deps.messages.create({
      caller,
      headers: request.headers,
      body,
      bodyBytes: Number(request.headers['content-length'] ?? Buffer.byteLength(JSON.stringify(body))),
      clientSignal: clientGoneSignal(reply),
    });
    reply.headers(outcome.headers);
    if (outcome.kind === 'json') return reply.send(outcome.body);
    reply.headers({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    return reply.send(Readable.from(outcome.frames, { objectMode: false }));
  });

  app.post('/v1/messages/count_tokens', async (request, reply) => {
    const caller = await deps.authenticator.authenticate(request.headers);
    const result = await deps.countTokens.count({
      caller,
      headers: request.headers,
      body: jsonBody(request),
    });
    return reply.headers(result.headers).send(result.body);
  });
}
