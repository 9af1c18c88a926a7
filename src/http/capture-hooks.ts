/**
 * Body capture on the HTTP path (capture/): for a model call of a Project with capture on, the
 * request body as the client sent it and the response body as the client received it (JSON, text,
 * audio, or the server-sent events of a stream) are tapped while they pass, each up to the
 * Project's `max_body_bytes`, and handed to the background writer when the response closes.
 *
 * A model call is a request the ledger reserved at least one attempt for (RequestRecord
 * attemptIds): requests refused before any attempt have nothing to file a capture under. The work
 * on the call's path is copying at most `max_body_bytes` of each body and one queue offer at the
 * end; sealing and writing happen in the background (capture-writer.ts). With no Project
 * capturing, no hook is registered.
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BodyTap } from '../capture/body-tap.js';
import type { CapturePolicy } from '../capture/capture-policy.js';
import type { CaptureWriter } from '../capture/capture-writer.js';
import type { Clock } from '../lib/clock.js';
import { requestRecordOf } from '../observability/http-hooks.js';
import { jsonBodyBytes, jsonTextOf } from './body.js';

export interface CaptureHookDeps {
  policy: CapturePolicy;
  writer: CaptureWriter;
  clock: Clock;
}

interface CaptureState {
  deps: CaptureHookDeps;
  /** The response's tap once the call is known to be captured; undefined before, null when not captured. */
  response: BodyTap | null | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    svcCapture: CaptureState | null;
  }
}

function headerText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'number') return String(value);
  return null;
}

/** The request body as the client sent it, up to `maxBytes`. */
function requestTap(request: FastifyRequest, maxBytes: number): BodyTap {
  const tap = new BodyTap(maxBytes);
  const text = jsonTextOf(request);
  if (text !== undefined) tap.add(text, jsonBodyBytes(request));
  else if (Buffer.isBuffer(request.body)) tap.add(request.body);
  else {
    // A multipart upload (audio transcriptions) streams through unbuffered: its length is
    // recorded, its content is not kept (truncated at 0 bytes).
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > 0) tap.bytes = length;
  }
  return tap;
}

/**
 * The response's tap when this request is a captured model call (decided once, when its response
 * starts); undefined otherwise. The capture is offered to the writer when the response closes.
 */
export function captureTapOf(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string | null,
): BodyTap | undefined {
  const state = request.svcCapture;
  if (!state) return undefined;
  if (state.response !== undefined) return state.response ?? undefined;
  const record = requestRecordOf(request);
  const projectId = record?.projectId ?? null;
  const settings = projectId !== null ? state.deps.policy.of(projectId) : undefined;
  if (!record?.attemptIds || projectId === null || !settings?.enabled) {
    state.response = null;
    return undefined;
  }
  const { deps } = state;
  const requestBody = requestTap(request, settings.maxBodyBytes);
  const response = new BodyTap(settings.maxBodyBytes);
  state.response = response;
  reply.raw.once('close', () => {
    deps.writer.offer({
      projectId,
      attemptIds: record.attemptIds ?? [],
      capturedAtMs: deps.clock.now(),
      request: { contentType: headerText(request.headers['content-type']), tap: requestBody },
      response: {
        status: reply.raw.statusCode,
        contentType,
        tap: response,
      },
    });
  });
  return response;
}

/** A stream answer (audio) passed through unchanged while its bytes are tapped. */
function tapped(stream: Readable, tap: BodyTap): Readable {
  const through = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      tap.add(chunk);
      done(null, chunk);
    },
  });
  pipeline(stream, through, () => undefined);
  return through;
}

export function registerCaptureHooks(app: FastifyInstance, deps: CaptureHookDeps): void {
  if (!deps.policy.anyEnabled) return;
  app.decorateRequest('svcCapture', null);
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.url.startsWith('/v1/')) request.svcCapture = { deps, response: undefined };
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const tap = captureTapOf(request, reply, headerText(reply.getHeader('content-type')));
    if (!tap || payload === null || payload === undefined) return done(null, payload);
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      tap.add(payload);
      return done(null, payload);
    }
    if (typeof (payload as Readable).pipe === 'function') return done(null, tapped(payload as Readable, tap));
    done(null, payload);
  });
}
