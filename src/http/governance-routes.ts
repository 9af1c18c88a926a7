/**
 * /svc/v1 routes. Thin: authenticate, rate-limit, check scope, Content-Type and Idempotency-Key,
 * then call the governance use case. Every check happens in this order on every route.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { checkIdempotencyKey } from '../governance/idempotency.js';
import type { KeysService } from '../governance/keys-service.js';
import type { RateLimiter } from '../governance/rate-limit.js';
import { requireAnyScope } from '../governance/scopes.js';
import type { Caller, GovernanceService, WriteRequest } from '../governance/service.js';
import { noteRateLimited } from '../limits/rate-limit-scope.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import type { EndpointsService } from '../webhooks/endpoints-service.js';
import { type Authenticator, requireScopes } from './auth.js';
import { isJsonContentType } from './body.js';
import { registerKeysRoutes } from './keys-routes.js';
import { registerWebhooksRoutes } from './webhooks-routes.js';

export const GOVERNANCE_BODY_LIMIT = 16 * 1024;

export interface GovernanceRouteDeps {
  governance: GovernanceService;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  keys: KeysService;
  webhooks: EndpointsService;
}

type IdParams = { Params: { id: string } };

/** `scope`: the scope the route needs, or a list of scopes of which any one will do. */
export type Guard = (request: FastifyRequest, scope: string | readonly string[]) => Promise<Caller>;

/** Authenticate, rate-limit (per Project and key), then check the scope: every /svc/v1 route. */
export function governanceGuard(deps: GovernanceRouteDeps): Guard {
  return async function guard(request: FastifyRequest, scope: string | readonly string[]): Promise<Caller> {
    const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    const limits = deps.governance.project(caller.projectId).rate_limit;
    const wait = await deps.rateLimiter.take(`${caller.projectId}/${caller.keyId}`, {
      requestsPerSecond: limits.requests_per_second,
      burst: limits.burst,
    });
    if (wait > 0) {
      noteRateLimited(caller.request, 'governance_requests');
      throw new GatewayError(
        'governance_rate_limited',
        `Governance rate limit exceeded; retry in ${wait} s.`,
        {
          retryAfter: String(wait),
        },
      );
    }
    if (typeof scope === 'string') requireScopes(caller, [scope]);
    else requireAnyScope(caller, scope);
    return caller;
  };
}

export function registerGovernanceRoutes(app: FastifyInstance, deps: GovernanceRouteDeps): void {
  const guard = governanceGuard(deps);

  function write(request: FastifyRequest, caller: Caller): WriteRequest {
    if (!isJsonContentType(request.headers['content-type']) || Buffer.isBuffer(request.body)) {
      throw new GatewayError('invalid_request', 'Content-Type must be application/json.');
    }
    const idempotencyKey = checkIdempotencyKey(request.headers['idempotency-key']);
    if (request.body === undefined)
      throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
    return {
      caller,
      idempotencyKey,
      method: request.method,
      path: request.url.split('?')[0]!,
      body: request.body,
    };
  }

  const options = { bodyLimit: GOVERNANCE_BODY_LIMIT };

  app.post('/svc/v1/work-units', options, async (request, reply) => {
    const caller = await guard(request, 'work_unit:create');
    const result = await deps.governance.createWorkUnit(write(request, caller));
    return reply.code(result.status).send(result.body);
  });

  app.get<IdParams>('/svc/v1/work-units/:id', async (request) => {
    const caller = await guard(request, 'governance:read');
    return deps.governance.getWorkUnit(caller, request.params.id);
  });

  app.post<IdParams>('/svc/v1/work-units/:id/close', options, async (request, reply) => {
    const caller = await guard(request, 'work_unit:create');
    const result = await deps.governance.closeWorkUnit(write(request, caller), request.params.id);
    return reply.code(result.status).send(result.body);
  });

  app.post<IdParams>('/svc/v1/work-units/:id/outcomes', options, async (request, reply) => {
    const caller = await guard(request, 'outcome:write');
    const result = await deps.governance.reportOutcome(write(request, caller), request.params.id);
    return reply.code(result.status).send(result.body);
  });

  app.post('/svc/v1/runs', options, async (request, reply) => {
    const caller = await guard(request, 'run:create');
    const result = await deps.governance.createRun(write(request, caller));
    return reply.code(result.status).send(result.body);
  });

  app.get<IdParams>('/svc/v1/runs/:id', async (request) => {
    const caller = await guard(request, 'governance:read');
    return deps.governance.getRun(caller, request.params.id);
  });

  app.post<IdParams>('/svc/v1/runs/:id/close', options, async (request, reply) => {
    const caller = await guard(request, 'run:create');
    const result = await deps.governance.closeRun(write(request, caller), request.params.id);
    return reply.code(result.status).send(result.body);
  });

  registerKeysRoutes(app, { keys: deps.keys, guard, write, bodyLimit: GOVERNANCE_BODY_LIMIT });
  registerWebhooksRoutes(app, { webhooks: deps.webhooks, guard, write, bodyLimit: GOVERNANCE_BODY_LIMIT });
}
