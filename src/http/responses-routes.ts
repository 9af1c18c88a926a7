/**
 * /v1/responses (responses wire, vendorb error dialect). Thin: authenticate, check the scope, hand
 * over to the use case, write its headers and body. Creates answer 200 (vendorb wire).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { ResponsesService } from '../experimental/responses/service.js';
import { requireModel, requireScopes } from '../governance/scopes.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import type { Authenticator } from './auth.js';
import { isJsonContentType, jsonBodyBytes } from './body.js';
import { readCallTags } from './call-tags.js';
import { clientGoneSignal, writeEventStream } from './messages-routes.js';

export interface ResponsesRouteDeps {
  authenticator: Authenticator;
  responses: ResponsesService;
}

export function jsonObjectBody(request: FastifyRequest): unknown {
  if (!isJsonContentType(request.headers['content-type']) || Buffer.isBuffer(request.body)) {
    throw new GatewayError('invalid_request', 'Content-Type must be application/json.');
  }
  if (request.body === undefined)
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  return request.body;
}

type IdParams = { Params: { id: string } };

export function registerResponsesRoutes(app: FastifyInstance, deps: ResponsesRouteDeps): void {
  const caller = async (request: FastifyRequest) => {
    const found = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    requireScopes(found, ['inference']);
    return found;
  };

  app.post('/v1/responses', async (request, reply) => {
    const who = await caller(request);
    readCallTags(request);
    const body = jsonObjectBody(request);
    requireModel(who, body);
    const answer = await deps.responses.create({
      caller: who,
      headers: request.headers,
      body,
      bodyBytes: jsonBodyBytes(request),
      clientSignal: clientGoneSignal(reply),
    });
    if (answer.kind === 'stream') return writeEventStream(request, reply, answer.headers, answer.frames);
    return reply.headers(answer.headers).send(answer.body);
  });

  app.get<IdParams>('/v1/responses/:id', async (request, reply) => {
    const answer = await deps.responses.get(await caller(request), request.params.id);
    return reply.headers(answer.headers).send(answer.body);
  });

  app.post<IdParams>('/v1/responses/:id/cancel', async (request, reply) => {
    const answer = await deps.responses.cancel(await caller(request), request.params.id);
    return reply.headers(answer.headers).send(answer.body);
  });

  app.delete<IdParams>('/v1/responses/:id', async (request, reply) => {
    const answer = await deps.responses.delete(await caller(request), request.params.id);
    return reply.headers(answer.headers).send(answer.body);
  });
}
