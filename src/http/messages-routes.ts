/**
 * /v1/messages and /v1/messages/count_tokens. Thin: authenticate, hand the parsed body to the
 * use case, and write JSON or a server-sent event stream (piped with backpressure; a client that
 * goes away aborts the upstream request).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { CountTokensService } from '../gateway/messages/count-tokens-service.js';
import type { MessagesOutcome, MessagesService } from '../gateway/messages/messages-service.js';
import type { Caller } from '../governance/service.js';
import { type CancelSignal, ClientGone } from '../lib/cancel-signal.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import { type Authenticator, requireModel } from './auth.js';
import { isJsonContentType, jsonBodyBytes } from './body.js';
import { readCallTags } from './call-tags.js';
import { captureTapOf } from './capture-hooks.js';
import { rateLimitHeadersOf } from './rate-limit-headers.js';

export interface MessagesRouteDeps {
  authenticator: Authenticator;
  messages: MessagesService;
  countTokens: CountTokensService;
}

export function jsonBody(request: FastifyRequest): unknown {
  if (!isJsonContentType(request.headers['content-type']) || Buffer.isBuffer(request.body)) {
    throw new GatewayError('invalid_request', 'Content-Type must be application/json.');
  }
  if (request.body === undefined)
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  return request.body;
}

/** A signal that fires when the client closes the connection before the response finished. */
export function clientGoneSignal(reply: FastifyReply): CancelSignal {
  const gone = new ClientGone();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone;
}

/** Resolves when the socket can take more data, or when the client has gone. */
function writable(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}

/**
 * Writes the server-sent events straight to the socket, one write per batch of frames, waiting
 * for 'drain' when the client reads slower than the upstream writes (backpressure, no buffering).
 * The last batch and the response's end are written in the same turn (no await between them when
 * the socket takes the batch), so the corked socket sends both at once (the attempt runner's pipe
 * holds the finishing batch for that under load). The frames generator never throws: failures
 * arrive as SSE `error` frames.
 */
export async function writeEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string>,
  frames: AsyncGenerator<string>,
): Promise<void> {
  reply.hijack();
  const response = reply.raw;
  const contentType = 'text/event-stream; charset=utf-8';
  response.writeHead(200, {
    ...rateLimitHeadersOf(request),
    ...headers,
    'request-id': request.id,
    'content-type': contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  // Body capture (capture-hooks.ts): the frames as the client receives them, when its Project captures.
  const capture = captureTapOf(request, reply, contentType);
  for await (const text of frames) {
    if (response.destroyed) continue;
    capture?.add(text);
    if (!response.write(text)) await writable(response);
  }
  // The one log line of this request is written by the observability hooks when the response closes.
  response.end();
}

/** The call a model endpoint hands to its use case (the caller allowed the body's model). */
export interface ModelCall {
  caller: Caller;
  headers: FastifyRequest['headers'];
  body: unknown;
  bodyBytes: number;
  clientSignal: CancelSignal;
}

/**
 * The handler of a model endpoint (/v1/messages, /v1/chat/completions): authenticate, a JSON body,
 * the key's model allow-list, then the use case's answer as JSON or as a server-sent event stream.
 */
export function modelCallHandler(
  authenticator: Authenticator,
  create: (call: ModelCall) => Promise<MessagesOutcome>,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async (request, reply) => {
    const caller = await authenticator.authenticate(request.headers, requestRecordOf(request));
    readCallTags(request);
    const body = jsonBody(request);
    requireModel(caller, body);
    const outcome = await create({
      caller,
      headers: request.headers,
      body,
      bodyBytes: jsonBodyBytes(request),
      clientSignal: clientGoneSignal(reply),
    });
    if (outcome.kind === 'json') return reply.headers(outcome.headers).send(outcome.body);
    await writeEventStream(request, reply, outcome.headers, outcome.frames);
  };
}

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  app.post(
    '/v1/messages',
    modelCallHandler(deps.authenticator, (call) => deps.messages.create(call)),
  );

  app.post('/v1/messages/count_tokens', async (request, reply) => {
    const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    readCallTags(request);
    const body = jsonBody(request);
    requireModel(caller, body);
    const result = await deps.countTokens.count({ caller, headers: request.headers, body });
    return reply.headers(result.headers).send(result.body);
  });
}
