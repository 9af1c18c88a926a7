/**
 * /v1/embeddings, /v1/audio/speech, /v1/audio/transcriptions, /v1/images/generations, /v1/moderations (vendorb
 * dialect). Thin: authenticate, hand the body (JSON, or the multipart parts of a transcription) to
 * the use case, write JSON, text or the streamed audio with the upstream's content type.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { MediaAnswer, MediaCall, MediaService } from '../experimental/media/media-service.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import { type Authenticator, requireModel } from './auth.js';
import { isJsonContentType } from './body.js';
import { readCallTags } from './call-tags.js';
import { abandonBody, checkMultipart, formParts, registerMultipart } from './multipart-form.js';

export interface MediaRouteDeps {
  authenticator: Authenticator;
  media: MediaService;
  maxUploadBytes: number;
}

function send(reply: FastifyReply, answer: MediaAnswer): FastifyReply {
  reply.headers(answer.headers);
  switch (answer.kind) {
    case 'json':
      return reply.send(answer.body);
    case 'text':
      return reply.send(answer.text);
    case 'stream':
      return reply.send(answer.stream);
    default: {
      const never: never = answer;
      throw new Error(`unknown answer ${String(never)}`);
    }
  }
}

export function registerMediaRoutes(app: FastifyInstance, deps: MediaRouteDeps): void {
  async function jsonCall(request: FastifyRequest): Promise<MediaCall> {
    const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
    readCallTags(request);
    if (
      !isJsonContentType(request.headers['content-type']) ||
      Buffer.isBuffer(request.body) ||
      request.body === undefined
    ) {
      throw new GatewayError(
        'invalid_request',
        'Content-Type must be application/json with a JSON object body.',
      );
    }
    requireModel(caller, request.body);
    return { caller, headers: request.headers, body: request.body };
  }

  app.post('/v1/embeddings', async (request, reply) =>
    send(reply, await deps.media.embeddings(await jsonCall(request))),
  );
  app.post('/v1/audio/speech', async (request, reply) =>
    send(reply, await deps.media.speech(await jsonCall(request))),
  );
  app.post('/v1/images/generations', async (request, reply) =>
    send(reply, await deps.media.images(await jsonCall(request))),
  );
  app.post('/v1/moderations', async (request, reply) =>
    send(reply, await deps.media.moderation(await jsonCall(request))),
  );

  app.register(async (scope) => {
    await registerMultipart(scope, deps.maxUploadBytes);
    scope.post('/v1/audio/transcriptions', async (request, reply) => {
      const caller = await deps.authenticator.authenticate(request.headers, requestRecordOf(request));
      readCallTags(request);
      checkMultipart(request, deps.maxUploadBytes);
      try {
        return send(
          reply,
          await deps.media.transcription({ caller, headers: request.headers, parts: formParts(request) }),
        );
      } catch (error) {
        abandonBody(request);
        throw error;
      }
    });
  });
}
