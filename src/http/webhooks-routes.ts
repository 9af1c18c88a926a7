/**
 * /svc/v1/webhook-endpoints: webhook endpoints and their deliveries (scope webhooks:admin).
 * Registered by the governance routes, so authentication, the governance rate limit, the scope,
 * Content-Type and Idempotency-Key checks are the same ones, in the same order, as every other
 * /svc/v1 route. DELETE takes no body and no Idempotency-Key (a repeated DELETE answers 404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller, WriteRequest } from '../governance/service.js';
import { type EndpointsService, WEBHOOKS_SCOPE } from '../webhooks/endpoints-service.js';

export interface WebhooksRouteDeps {
  webhooks: EndpointsService;
  guard(request: FastifyRequest, scope: string): Promise<Caller>;
  write(request: FastifyRequest, caller: Caller): WriteRequest;
  bodyLimit: number;
}

type IdParams = { Params: { id: string } };
type DeliveryParams = { Params: { id: string; delivery_id: string } };
type ListQuery = { Querystring: Record<string, unknown> };

const BASE = '/svc/v1/webhook-endpoints';

export function registerWebhooksRoutes(app: FastifyInstance, deps: WebhooksRouteDeps): void {
  const options = { bodyLimit: deps.bodyLimit };

  app.post(BASE, options, async (request, reply) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    const result = await deps.webhooks.create(deps.write(request, caller));
    return reply.code(result.status).header('cache-control', 'no-store').send(result.body);
  });

  app.get(BASE, async (request) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    return deps.webhooks.list(caller);
  });

  app.get<IdParams>(`${BASE}/:id`, async (request) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    return deps.webhooks.get(caller, request.params.id);
  });

  app.delete<IdParams>(`${BASE}/:id`, async (request) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    return deps.webhooks.delete(caller, request.params.id);
  });

  app.post<IdParams>(`${BASE}/:id/rotate-secret`, options, async (request, reply) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    const result = await deps.webhooks.rotateSecret(deps.write(request, caller), request.params.id);
    return reply.code(result.status).header('cache-control', 'no-store').send(result.body);
  });

  app.get<IdParams & ListQuery>(`${BASE}/:id/deliveries`, async (request) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    return deps.webhooks.listDeliveries(caller, request.params.id, request.query);
  });

  app.get<DeliveryParams>(`${BASE}/:id/deliveries/:delivery_id`, async (request) => {
    const caller = await deps.guard(request, WEBHOOKS_SCOPE);
    return deps.webhooks.getDelivery(caller, request.params.id, request.params.delivery_id);
  });

  app.post<DeliveryParams>(
    `${BASE}/:id/deliveries/:delivery_id/redeliver`,
    options,
    async (request, reply) => {
      const caller = await deps.guard(request, WEBHOOKS_SCOPE);
      const result = await deps.webhooks.redeliver(
        deps.write(request, caller),
        request.params.id,
        request.params.delivery_id,
      );
      return reply.code(result.status).send(result.body);
    },
  );
}
