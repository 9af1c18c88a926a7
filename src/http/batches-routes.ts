/**
 * /v1/batches (vendorb wire and error dialect). Thin: authenticate, check the scope, hand over to
 * the use case. Creates answer 200 (vendorb wire), replays too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BatchService } from '../experimental/batches/service.js';
import { requireScopes } from '../governance/scopes.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import type { Authenticator } from './auth.js';
import { readCallTags } from './call-tags.js';
import { jsonObjectBody } from './responses-routes.js';

export interface BatchesRouteDeps {
  authenticator: Authenticator;
  batches: BatchService;
}

type IdParams = { Params: { id: string } };

export function registerBatchesRoutes(app: FastifyInstance, deps: BatchesRouteDeps): void {
  const caller = async (request: FastifyRequest) => {
    const found = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    requireScopes(found, ['inference']);
    return found;
  };

  app.post('/v1/batches', async (request, reply) => {
    const who = await caller(request);
    readCallTags(request);
    const answer = await deps.batches.create({
      caller: who,
      headers: request.headers,
      body: jsonObjectBody(request),
    });
    return reply.send(answer.body);
  });

  app.get('/v1/batches', async (request, reply) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    return reply.send((await deps.batches.list(await caller(request), query)).body);
  });

  app.get<IdParams>('/v1/batches/:id', async (request, reply) => {
    return reply.send((await deps.batches.get(await caller(request), request.params.id)).body);
  });

  app.post<IdParams>('/v1/batches/:id/cancel', async (request, reply) => {
    return reply.send((await deps.batches.cancel(await caller(request), request.params.id)).body);
  });
}
