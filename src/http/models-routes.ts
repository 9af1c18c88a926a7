/**
 * GET /v1/models and GET /v1/models/{id}. Thin: authenticate, pick the dialect (vendora when the
 * request carries vendora-version, as the vendora SDK is configured to send; vendorb otherwise),
 * call the use case, and answer errors in that same dialect.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { renderError } from '../errors/render.js';
import type { ListQuery, ModelsCatalogue, ModelsDialect } from '../gateway/models/list-models.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import type { Authenticator } from './auth.js';

export interface ModelsRouteDeps {
  authenticator: Authenticator;
  models: ModelsCatalogue;
}

function dialectOf(request: FastifyRequest): ModelsDialect {
  return request.headers['vendora-version'] === undefined ? 'vendorb' : 'vendora';
}

export function registerModelsRoutes(app: FastifyInstance, deps: ModelsRouteDeps): void {
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    use: (dialect: ModelsDialect) => Promise<unknown>,
  ): Promise<FastifyReply> {
    const dialect = dialectOf(request);
    try {
      return reply.send(await use(dialect));
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const rendered = renderError(dialect, error, request.id);
      return reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
    }
  }

  app.get('/v1/models', (request, reply) =>
    answer(request, reply, async (dialect) => {
      const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
      const query = (request.query ?? {}) as Record<string, unknown>;
      const text = (name: keyof ListQuery) =>
        typeof query[name] === 'string' ? (query[name] as string) : undefined;
      return deps.models.list(caller, dialect, {
        limit: text('limit'),
        after_id: text('after_id'),
        before_id: text('before_id'),
      });
    }),
  );

  // A wildcard so aliases holding "/" (allowed in alias names) are found whether or not the client escapes it.
  app.get('/v1/models/*', (request, reply) =>
    answer(request, reply, async (dialect) => {
      const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
      const id = (request.params as { '*': string })['*'];
      return deps.models.retrieve(caller, dialect, id);
    }),
  );
}
