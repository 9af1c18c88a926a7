/**
 * /svc/v1/keys: Gateway Keys over the API (scope keys:admin). Registered by the governance routes,
 * so authentication, the governance rate limit, the scope, Content-Type and Idempotency-Key checks
 * are the same ones, in the same order, as every other /svc/v1 route.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeysService } from '../governance/keys-service.js';
import type { Caller, WriteRequest } from '../governance/service.js';

export interface KeysRouteDeps {
  keys: KeysService;
  guard(request: FastifyRequest, scope: string): Promise<Caller>;
  write(request: FastifyRequest, caller: Caller): WriteRequest;
  bodyLimit: number;
}

type IdParams = { Params: { id: string } };

export const KEYS_SCOPE = 'keys:admin';

export function registerKeysRoutes(app: FastifyInstance, deps: KeysRouteDeps): void {
  const options = { bodyLimit: deps.bodyLimit };

  app.post('/svc/v1/keys', options, async (request, reply) => {
    const caller = await deps.guard(request, KEYS_SCOPE);
    const result = await deps.keys.create(deps.write(request, caller));
    return reply.code(result.status).header('cache-control', 'no-store').send(result.body);
  });

  app.get('/svc/v1/keys', async (request) => {
    const caller = await deps.guard(request, KEYS_SCOPE);
    return deps.keys.list(caller);
  });

  app.get<IdParams>('/svc/v1/keys/:id', async (request) => {
    const caller = await deps.guard(request, KEYS_SCOPE);
    return deps.keys.get(caller, request.params.id);
  });

  app.post<IdParams>('/svc/v1/keys/:id/revoke', options, async (request, reply) => {
    const caller = await deps.guard(request, KEYS_SCOPE);
    const result = await deps.keys.revoke(deps.write(request, caller), request.params.id);
    return reply.code(result.status).send(result.body);
  });
}
