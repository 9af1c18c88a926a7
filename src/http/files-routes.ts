/**
 * /v1/files (vendorb dialect). Thin: authenticate, `inference` scope, optional Idempotency-Key on upload,
 * then the files use case. The upload is multipart and streamed to the object store; content is
 * streamed back from it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FilesService } from '../experimental/files/files-service.js';
import { optionalIdempotencyKey } from '../governance/idempotency.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import { type Authenticator, requireScopes } from './auth.js';
import { abandonBody, checkMultipart, formParts, registerMultipart } from './multipart-form.js';

export interface FilesRouteDeps {
  authenticator: Authenticator;
  files: FilesService;
  maxUploadBytes: number;
}

type IdParams = { Params: { id: string } };

export function registerFilesRoutes(app: FastifyInstance, deps: FilesRouteDeps): void {
  async function caller(request: FastifyRequest) {
    const found = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    requireScopes(found, ['inference']);
    return found;
  }

  app.register(async (scope) => {
    await registerMultipart(scope, deps.maxUploadBytes);
    scope.post('/v1/files', async (request, reply) => {
      const who = await caller(request);
      const idempotencyKey = optionalIdempotencyKey(request.headers['idempotency-key']);
      checkMultipart(request, deps.maxUploadBytes);
      try {
        const result = await deps.files.upload({
          caller: who,
          idempotencyKey,
          headers: request.headers,
          parts: formParts(request),
        });
        return reply.code(result.status).send(result.body);
      } catch (error) {
        abandonBody(request);
        throw error;
      }
    });
  });

  app.get('/v1/files', async (request) => {
    return deps.files.list(await caller(request), (request.query ?? {}) as Record<string, unknown>);
  });

  app.get<IdParams>('/v1/files/:id', async (request) => {
    return deps.files.get(await caller(request), request.params.id);
  });

  app.get<IdParams>('/v1/files/:id/content', async (request, reply) => {
    const content = await deps.files.content(await caller(request), request.params.id);
    return reply
      .headers({ 'content-type': 'application/octet-stream', 'content-length': String(content.bytes) })
      .send(content.stream);
  });

  app.delete<IdParams>('/v1/files/:id', async (request) => {
    return deps.files.delete(await caller(request), request.params.id);
  });
}
