/**
 * Embeddings, speech, transcriptions, images and moderations. The request's `model` is a media alias
 * (gateway/models/media-targets.ts): its first target, or its target on the Svc-Route connection,
 * gives the connection, the model id sent upstream and that model's prices (embeddings fall back
 * along the alias's targets on a retryable failure, as /v1/messages does). Each call:
 *   scope + Run (X-Svc-Run-ID) -> strict request check (unknown fields refused before any upstream
 *   call) -> alias -> target -> the attempt runner (ledger/attempt-runner.ts,
 *   which holds the settlement table) with the true worst case (money/resource-pricing.ts); this
 *   file supplies only the wire call and how to read each answer's cost.
 * Speech audio is streamed back with the upstream's content type. A transcription's audio is first
 * streamed into a private spool object (so every field is checked before the upstream sees a byte,
 * whatever the part order), then streamed upstream from it, and the spool is removed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Config, MediaEndpoint } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { type FormPart, fileTooLarge, repeatedField, unknownField } from '../../gateway/form-parts.js';
import { attachedRun } from '../../gateway/messages/call-headers.js';
import { type SkippedTarget, skippedHeader } from '../../gateway/messages/route-plan.js';
import {
  type MediaTarget,
  resolveMediaTarget,
  resolveMediaTargets,
} from '../../gateway/models/media-targets.js';
import { requireModel } from '../../governance/scopes.js';
import type { Caller } from '../../governance/service.js';
import type {
  AttemptRunner,
  ReadAnswer,
  RefusalInfo,
  UpstreamExchange,
} from '../../ledger/attempt-runner.js';
import type { AttemptPlan } from '../../ledger/ledger.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { randomBase32 } from '../../lib/ids.js';
import {
  embeddingInputBound,
  embeddingsCostOf,
  imageUnitPrice,
  moderationCostOf,
  resolveImageChoice,
  settledImageUnitPrice,
  speechCostOf,
  transcriptionCostOf,
  transcriptionReservationOf,
} from '../../money/resource-pricing.js';
import { type ObjectStore, ObjectTooLargeError } from '../../objects/port.js';
import type { ObjectOwner } from '../../objects/sweep.js';
import { mapChatError } from '../../primitives/chat-completions/error.js';
import {
  embeddingsInputTokens,
  imageCount,
  RESOURCE_PATHS,
  transcriptionSeconds,
} from '../../primitives/chat-completions/resource-paths.js';
import { multipartBody } from '../../primitives/shared/multipart-body.js';
import { callUpstream, readJsonBody, type UpstreamResponse } from '../../primitives/shared/upstream-call.js';
import { callUpstreamRaw } from '../../primitives/shared/upstream-raw.js';
import {
  checkEmbeddings,
  checkImages,
  checkModeration,
  checkSpeech,
  checkTranscription,
  isTranscriptionField,
  type TranscriptionField,
} from './media-requests.js';

export type MediaAnswer =
  | { kind: 'json'; headers: Record<string, string>; body: unknown }
  | { kind: 'stream'; headers: Record<string, string>; stream: Readable }
  | { kind: 'text'; headers: Record<string, string>; text: string };

export interface MediaCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface TranscriptionCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  parts: AsyncIterable<FormPart>;
}

export interface MediaDeps {
  config: Config;
  upstreams: Upstreams;
  runner: AttemptRunner;
  objects: ObjectStore;
}

interface Prepared<E extends MediaEndpoint> {
  caller: Caller;
  runId: string | null;
  connection: Connection;
  target: MediaTarget<E>;
  endpoint: E;
}

const SPOOL_PREFIX = 'spool_';

function contentTypeOf(response: UpstreamResponse, fallback: string): string {
  const value = response.headers['content-type'];
  return (Array.isArray(value) ? value[0] : value) ?? fallback;
}

function isJson(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || essence.endsWith('+json');
}

export class MediaService {
  constructor(private readonly deps: MediaDeps) {}

  private prepare<E extends MediaEndpoint>(
    caller: Caller,
    headers: IncomingHttpHeaders,
    endpoint: E,
    model: string | undefined,
  ): Prepared<E> {
    const runId = attachedRun(caller, headers);
    const target = resolveMediaTarget(this.deps.config, endpoint, model, headers);
    return this.prepared(caller, runId, endpoint, target);
  }

  private prepared<E extends MediaEndpoint>(
    caller: Caller,
    runId: string | null,
    endpoint: E,
    target: MediaTarget<E>,
  ): Prepared<E> {
    const connection = this.deps.upstreams.connections.get(target.connection);
    if (!connection)
      throw new Error(`media alias ${target.alias}: connection ${target.connection} is not built`);
    return { caller, runId, connection, target, endpoint };
  }

  private plan<E extends MediaEndpoint>(
    prepared: Prepared<E>,
    reservationMicrosUsd: number,
    worstCaseTokens?: number,
  ): AttemptPlan {
    return {
      ...(worstCaseTokens === undefined ? {} : { worstCaseTokens }),
      projectId: prepared.caller.projectId,
      keyId: prepared.caller.keyId,
      runId: prepared.runId,
      endpoint: `/v1/${prepared.endpoint.replace('.', '/')}`,
      alias: prepared.target.alias,
      connection: prepared.connection.name,
      profile: prepared.connection.row.id,
      primitive: prepared.connection.row.primitive,
      upstreamModel: prepared.target.upstreamModel,
      streamed: false,
      reservationMicrosUsd,
      request: prepared.caller.request,
    };
  }

  /** Runs the call through the attempt runner; a failure is thrown as the client's error. */
  private async run<Answer, E extends MediaEndpoint>(
    prepared: Prepared<E>,
    plan: AttemptPlan,
    exchange: UpstreamExchange<Answer>,
  ): Promise<{ answer: Answer; headers: Record<string, string> }> {
    const result = await this.deps.runner.call(plan, exchange);
    if (!result.ok) throw result.error;
    return {
      answer: result.answer,
      headers: { 'svc-route': prepared.connection.name, 'svc-attempt-id': result.attemptId },
    };
  }

  /**
   * Reserved at the input bound (money/resource-pricing.ts), which is also the call's worst case
   * against tokens-per-minute limits; settled at the input tokens the upstream reports (none
   * reported: the reservation is committed). `encoding_format` goes upstream as sent and the
   * answer comes back as the upstream wrote it (base64 = little-endian float32, decoded by the SDK).
   * The alias's targets are tried in order (one attempt each, as on /v1/messages): a retryable
   * failure moves on to the next target and is named in `svc-route-skipped`; Svc-Route pins one.
   */
  async embeddings(call: MediaCall): Promise<MediaAnswer> {
    const request = checkEmbeddings(call.body);
    const runId = attachedRun(call.caller, call.headers);
    const targets = resolveMediaTargets(this.deps.config, 'embeddings', request.model, call.headers);
    const bound = embeddingInputBound(request.input);
    const record = call.caller.request;
    const skipped: SkippedTarget[] = [];
    let failed: { connection: string; error: GatewayError } | undefined;
    for (const target of targets) {
      const prepared = this.prepared(call.caller, runId, 'embeddings', target);
      if (failed)
        this.deps.runner.fallback(
          target.alias,
          failed.connection,
          target.connection,
          failed.error.code,
          record,
        );
      const result = await this.deps.runner.call(
        this.plan(prepared, embeddingsCostOf(target.price, bound), bound),
        new MediaExchange(
          prepared.connection,
          RESOURCE_PATHS.embeddings,
          upstream(request, prepared),
          (response) => readEmbeddings(response, prepared),
        ),
      );
      if (result.ok) {
        const headers: Record<string, string> = {
          'svc-route': target.connection,
          'svc-attempt-id': result.attemptId,
        };
        if (skipped.length > 0) headers['svc-route-skipped'] = skippedHeader(skipped);
        return { kind: 'json', headers, body: result.answer };
      }
      if (!result.retryable) throw result.error;
      failed = { connection: target.connection, error: result.error };
      skipped.push({ connection: target.connection, reasons: [`failed: ${result.error.message}`] });
    }
    throw failed?.error ?? new GatewayError('upstream_unavailable', 'No upstream answered.');
  }

  async speech(call: MediaCall): Promise<MediaAnswer> {
    const request = checkSpeech(call.body);
    const prepared = this.prepare(call.caller, call.headers, 'audio.speech', request.model);
    const cost = speechCostOf(prepared.target.price, request.input);
    // The upstream accepted the text: the characters are billed whether or not the client reads it all.
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, cost),
      new MediaExchange(
        prepared.connection,
        RESOURCE_PATHS.speech,
        upstream(request, prepared),
        async (response) => ({
          answer: response,
          costMicrosUsd: cost,
          usage: null,
        }),
      ),
    );
    return {
      kind: 'stream',
      headers: { ...headers, 'content-type': contentTypeOf(answer, 'application/octet-stream') },
      // The upstream body is not a Node stream (upstream-body.ts): Fastify pipes this one, and
      // destroys it (aborting the upstream call) if the client goes away.
      stream: Readable.from(answer.body, { objectMode: false }),
    };
  }

  async images(call: MediaCall): Promise<MediaAnswer> {
    const request = checkImages(call.body);
    const prepared = this.prepare(call.caller, call.headers, 'images.generations', request.model);
    const price = prepared.target.price;
    const choice = resolveImageChoice(price, { size: request.size, quality: request.quality });
    const perImage = imageUnitPrice(price, choice);
    if (perImage === undefined) {
      const priced = price.per_image
        .map((row) => `${row.size}${row.quality ? ` ${row.quality}` : ''}`)
        .join(', ');
      throw new GatewayError(
        'invalid_request',
        `size/quality: ${choice.size ?? 'any size'} ${choice.quality ?? 'any quality'} is not priced for model ${prepared.target.alias} (priced: ${priced}).`,
        { param: request.size !== undefined ? 'size' : 'quality' },
      );
    }
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, perImage * (request.n ?? 1)),
      new MediaExchange(
        prepared.connection,
        RESOURCE_PATHS.images,
        upstream(request, prepared),
        async (response) => {
          const body = await jsonAnswer(response, prepared.connection);
          const images = imageCount(body);
          const reported = body as { size?: unknown; quality?: unknown };
          const unit = settledImageUnitPrice(price, perImage, {
            size: typeof reported.size === 'string' ? reported.size : undefined,
            quality: typeof reported.quality === 'string' ? reported.quality : undefined,
          });
          return { answer: body, costMicrosUsd: images === undefined ? null : images * unit, usage: null };
        },
      ),
    );
    return { kind: 'json', headers, body: answer };
  }

  async moderation(call: MediaCall): Promise<MediaAnswer> {
    const request = checkModeration(call.body);
    const prepared = this.prepare(call.caller, call.headers, 'moderations', request.model);
    const fee = moderationCostOf(prepared.target.price);
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, fee),
      new MediaExchange(
        prepared.connection,
        RESOURCE_PATHS.moderations,
        upstream(request, prepared),
        async (response) => ({
          answer: await jsonAnswer(response, prepared.connection),
          costMicrosUsd: fee,
          usage: null,
        }),
      ),
    );
    return { kind: 'json', headers, body: answer };
  }

  async transcription(call: TranscriptionCall): Promise<MediaAnswer> {
    attachedRun(call.caller, call.headers); // scope and Run refused before the upload is read
    const projectId = call.caller.projectId;
    const spoolKey = `${SPOOL_PREFIX}${randomBase32(26)}`;
    let spooled = false;
    try {
      const values = new Map<TranscriptionField, string>();
      let audio: { filename: string; contentType: string; bytes: number } | undefined;
      const maxBytes = this.deps.config.objects.max_upload_bytes;
      for await (const part of call.parts) {
        if (part.kind === 'file') {
          if (part.name !== 'file') throw unknownField(part.name);
          if (audio) throw repeatedField('file');
          spooled = true;
          try {
            const put = await this.deps.objects.put(projectId, spoolKey, part.content, {
              sealed: false,
              maxBytes,
            });
            audio = { filename: part.filename || 'audio', contentType: part.contentType, bytes: put.bytes };
          } catch (error) {
            if (error instanceof ObjectTooLargeError) throw fileTooLarge(maxBytes);
            throw error;
          }
          continue;
        }
        if (!isTranscriptionField(part.name)) throw unknownField(part.name);
        if (values.has(part.name)) throw repeatedField(part.name);
        values.set(part.name, part.value);
      }
      const request = checkTranscription(values);
      requireModel(call.caller, { model: request.model });
      if (!audio) throw new GatewayError('invalid_request', 'file: required', { param: 'file' });
      const prepared = this.prepare(call.caller, call.headers, 'audio.transcriptions', request.model);
      const price = prepared.target.price;
      const fields = request.fields.map(([name, value]) =>
        name === 'model' ? ([name, prepared.target.upstreamModel] as const) : ([name, value] as const),
      );
      const content = await this.deps.objects.get(projectId, spoolKey);
      if (!content) throw new Error('the spooled audio vanished');
      const form = multipartBody(fields, { field: 'file', ...audio, content });
      const { answer, headers } = await this.run(
        prepared,
        this.plan(prepared, transcriptionReservationOf(price)),
        new MediaExchange(
          prepared.connection,
          RESOURCE_PATHS.transcriptions,
          undefined,
          async (response): Promise<ReadAnswer<MediaAnswer>> => {
            const contentType = contentTypeOf(response, 'text/plain; charset=utf-8');
            const answerHeaders = { 'content-type': contentType };
            if (!isJson(contentType)) {
              // Text formats report no duration: the cost cannot be known, so the reservation is committed.
              const text = await response.body.text();
              return {
                answer: { kind: 'text', headers: answerHeaders, text },
                costMicrosUsd: null,
                usage: null,
              };
            }
            const body = await jsonAnswer(response, prepared.connection);
            const seconds = transcriptionSeconds(body);
            return {
              answer: { kind: 'json', headers: answerHeaders, body },
              costMicrosUsd: seconds === undefined ? null : transcriptionCostOf(price, seconds),
              usage: null,
            };
          },
          (signal) =>
            callUpstreamRaw(prepared.connection, {
              method: 'POST',
              path: RESOURCE_PATHS.transcriptions,
              headers: { 'content-type': form.contentType, 'content-length': String(form.contentLength) },
              body: form.body,
              ...(signal ? { signal } : {}),
            }),
        ),
      );
      return { ...answer, headers: { ...headers, ...answer.headers } };
    } finally {
      if (spooled) await this.deps.objects.delete(projectId, spoolKey).catch(() => undefined);
    }
  }

  /** Spool objects are never referenced after their request: the sweep removes any left behind. */
  static sweepOwner(): ObjectOwner {
    return { prefix: SPOOL_PREFIX, referenced: async () => false };
  }
}

/** The body sent upstream: the client's request with the alias replaced by the target's model id. */
function upstream<E extends MediaEndpoint>(request: object, prepared: Prepared<E>): Record<string, unknown> {
  return { ...request, model: prepared.target.upstreamModel };
}

/** An embeddings answer: its cost from the reported input tokens (none reported: unknown). */
async function readEmbeddings(
  response: UpstreamResponse,
  prepared: Prepared<'embeddings'>,
): Promise<ReadAnswer<unknown>> {
  const body = await jsonAnswer(response, prepared.connection);
  const tokens = embeddingsInputTokens(body);
  const model = (body as { model?: unknown }).model;
  return {
    answer: body,
    responseModel: typeof model === 'string' ? model : null,
    costMicrosUsd: tokens === undefined ? null : embeddingsCostOf(prepared.target.price, tokens),
    usage:
      tokens === undefined
        ? null
        : { inputTokens: tokens, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  };
}

/** Reads a JSON answer; an unreadable one is thrown (the runner commits the reservation: the upstream may have billed). */
async function jsonAnswer(response: UpstreamResponse, connection: Connection): Promise<unknown> {
  const body = await readJsonBody(response.body, connection.name).catch(() => undefined);
  if (typeof body !== 'object' || body === null)
    throw new GatewayError('upstream_error', `${connection.name} answered with a body that is not JSON.`);
  return body;
}

/** A media endpoint's exchange: a JSON POST (or the given raw send) on the chat wire, and how to read its answer. */
class MediaExchange<Answer> implements UpstreamExchange<Answer> {
  constructor(
    private readonly connection: Connection,
    private readonly path: string,
    private readonly body: unknown,
    readonly read: (response: UpstreamResponse) => Promise<ReadAnswer<Answer>>,
    private readonly raw?: (signal: CancelSignal | undefined) => Promise<UpstreamResponse>,
  ) {}

  send(signal: CancelSignal | undefined): Promise<UpstreamResponse> {
    if (this.raw) return this.raw(signal);
    return callUpstream(this.connection, { path: this.path, body: this.body, ...(signal ? { signal } : {}) });
  }

  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo {
    return mapChatError(status, body, headers);
  }
}
