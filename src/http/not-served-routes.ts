/**
 * Async invocations and rerank: in the contract, not served, because their only profiles are
 * withheld (they cannot be configured). Every route answers 501 endpoint_not_served naming the
 * profile, after authentication, so the answer is the same for every caller with a valid key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import { type Authenticator, requireScopes } from './auth.js';

export const ASYNC_INVOKE_PROFILE = 'cloudf.runtime.async-invoke.v1';
export const RERANK_PROFILE = 'cloudf.agent-runtime.rerank.v1';

function notServed(what: string, profile: string, extra = ''): GatewayError {
  return new GatewayError(
    'endpoint_not_served',
    `${what} is not served: its only profile, ${profile}, is withheld.${extra}`,
  );
}

export function registerNotServedRoutes(app: FastifyInstance, deps: { authenticator: Authenticator }): void {
  const refuse = (what: string, profile: string, extra?: string) => async (request: FastifyRequest) => {
    requireScopes(await deps.authenticator.authenticate(request.headers, requestRecordOf(request)), [
      'inference',
    ]);
    throw notServed(what, profile, extra);
  };
  app.post('/v1/async/invocations', refuse('POST /v1/async/invocations', ASYNC_INVOKE_PROFILE));
  app.get('/v1/async/invocations/:id', refuse('GET /v1/async/invocations/{id}', ASYNC_INVOKE_PROFILE));
  app.post(
    '/v1/async/invocations/:id/cancel',
    refuse(
      'POST /v1/async/invocations/{id}/cancel',
      ASYNC_INVOKE_PROFILE,
      ' Were it served, cancel would still always fail closed: the upstream has no cancel operation, so an invocation runs to completion once submitted.',
    ),
  );
  app.post('/v1/rerank', refuse('POST /v1/rerank', RERANK_PROFILE));
}
