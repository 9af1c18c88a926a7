/**
 * Speech, transcriptions, images and moderations on a chat-embeddings connection (Svc-Route or
 * the endpoint's default connection). Each call:
 *   scope + Run (X-Svc-Run-ID) -> connection -> configured price (else 501) -> strict request check
 *   (unknown fields refused before any upstream call) -> the attempt runner (ledger/attempt-runner.ts,
 *   which holds the settlement table) with the true worst case (ledger/resource-pricing.ts); this
 *   file supplies only the wire call and how to read each answer's cost.
 * Speech audio is streamed back with the upstream's content type. A transcription's audio is first
 * streamed into a private spool object (so every field is checked before the upstream sees a byte,
 * whatever the part order), then streamed upstream from it, and the spool is removed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Config, ResourcePricesConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { type FormPart, repeatedField, unknownField } from '../../gateway/form-parts.js';
import { attachedRun } from '../../gateway/messages/call-headers.js';
import { type ResourceEndpoint, resolveConnection } from '../../gateway/resource-route.js';
import { requireModel } from '../../governance/scopes.js';
import type { Caller } from '../../governance/service.js';
import type {
  AttemptRunner,
  ReadAnswer,
  RefusalInfo,
  UpstreamExchange,
} from '../../ledger/attempt-runner.js';
import type { AttemptPlan } from '../../ledger/ledger.js';
import { characterCount, imagesCost, speechCost, transcriptionCost } from '../../ledger/resource-pricing.js';
import { randomBase32 } from '../../lib/ids.js';
import { type ObjectStore, ObjectTooLargeError } from '../../objects/port.js';
import type { ObjectOwner } from '../../objects/sweep.js';
import { mapChatError } from '../../primitives/chat-completions/error.js';
import {
  imageCount,
  SIDE_PATHS,
  transcriptionSeconds,
} from '../../primitives/chat-completions/side-endpoints.js';
import { multipartBody } from '../../primitives/shared/multipart-body.js';
import { callUpstream, readJsonBody, type UpstreamResponse } from '../../primitives/shared/upstream-call.js';
import { callUpstreamRaw } from '../../primitives/shared/upstream-raw.js';
import {
  checkImages,
  checkModeration,
  checkSpeech,
  checkTranscription,
  isTranscriptionField,
  type TranscriptionField,
} from './side-requests.js';

export type SideAnswer =
  | { kind: 'json'; headers: Record<string, string>; body: unknown }
  | { kind: 'stream'; headers: Record<string, string>; stream: Readable }
  | { kind: 'text'; headers: Record<string, string>; text: string };

export interface SideCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface TranscriptionCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  parts: AsyncIterable<FormPart>;
}

export interface SideDeps {
  config: Config;
  upstreams: Upstreams;
  runner: AttemptRunner;
  objects: ObjectStore;
}

interface Prepared {
  caller: Caller;
  runId: string | null;
  connection: Connection;
  prices: ResourcePricesConfig;
  endpoint: ResourceEndpoint;
}

type PriceField = Exclude<keyof ResourcePricesConfig, 'transcription_max_seconds'>;

const SPOOL_PREFIX = 'spool_';

function contentTypeOf(response: UpstreamResponse, fallback: string): string {
  const value = response.headers['content-type'];
  return (Array.isArray(value) ? value[0] : value) ?? fallback;
}

function isJson(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || essence.endsWith('+json');
}

export class SideEndpointsService {
  private readonly prices: ReadonlyMap<string, ResourcePricesConfig>;

  constructor(private readonly deps: SideDeps) {
    this.prices = new Map(
      deps.config.connections.flatMap((connection) =>
        connection.resource_prices ? [[connection.name, connection.resource_prices] as const] : [],
      ),
    );
  }

  private prepare(
    caller: Caller,
    headers: IncomingHttpHeaders,
    endpoint: ResourceEndpoint,
    price: PriceField,
  ): Prepared {
    const runId = attachedRun(caller, headers);
    const connection = resolveConnection(
      this.deps.upstreams,
      this.deps.config.endpoints.default_connections,
      headers,
      endpoint,
    );
    const prices = this.prices.get(connection.name);
    if (prices?.[price] === undefined) {
      throw new GatewayError(
        'endpoint_not_served',
        `${endpoint} is not served on connection ${connection.name}: it has no configured price (resource_prices.${price}).`,
      );
    }
    return { caller, runId, connection, prices, endpoint };
  }

  private plan(prepared: Prepared, model: string, reservationMicrosUsd: number): AttemptPlan {
    return {
      projectId: prepared.caller.projectId,
      keyId: prepared.caller.keyId,
      runId: prepared.runId,
      endpoint: `/v1/${prepared.endpoint.replace('.', '/')}`,
      alias: model,
      connection: prepared.connection.name,
      profile: prepared.connection.row.id,
      primitive: prepared.connection.row.primitive,
      upstreamModel: model,
      streamed: false,
      reservationMicrosUsd,
    };
  }

  /** Runs the call through the attempt runner; a failure is thrown as the client's error. */
  private async run<Answer>(
    prepared: Prepared,
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

  async speech(call: SideCall): Promise<SideAnswer> {
    const prepared = this.prepare(
      call.caller,
      call.headers,
      'audio.speech',
      'speech_per_million_characters_micros',
    );
    const request = checkSpeech(call.body);
    const cost = speechCost(
      characterCount(request.input),
      prepared.prices.speech_per_million_characters_micros!,
    );
    // The upstream accepted the text: the characters are billed whether or not the client reads it all.
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, request.model, cost),
      new SideExchange(prepared.connection, SIDE_PATHS.speech, request, async (response) => ({
        answer: response,
        costMicrosUsd: cost,
        usage: null,
      })),
    );
    return {
      kind: 'stream',
      headers: { ...headers, 'content-type': contentTypeOf(answer, 'application/octet-stream') },
      stream: answer.body,
    };
  }

  async images(call: SideCall): Promise<SideAnswer> {
    const prepared = this.prepare(call.caller, call.headers, 'images.generations', 'image_micros');
    const request = checkImages(call.body);
    const perImage = prepared.prices.image_micros!;
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, request.model ?? '', imagesCost(request.n ?? 1, perImage)),
      new SideExchange(prepared.connection, SIDE_PATHS.images, request, async (response) => {
        const body = await jsonAnswer(response, prepared.connection);
        const images = imageCount(body);
        return {
          answer: body,
          costMicrosUsd: images === undefined ? null : imagesCost(images, perImage),
          usage: null,
        };
      }),
    );
    return { kind: 'json', headers, body: answer };
  }

  async moderation(call: SideCall): Promise<SideAnswer> {
    const prepared = this.prepare(call.caller, call.headers, 'moderations', 'moderation_request_micros');
    const request = checkModeration(call.body);
    const fee = prepared.prices.moderation_request_micros!;
    const { answer, headers } = await this.run(
      prepared,
      this.plan(prepared, request.model ?? '', fee),
      new SideExchange(prepared.connection, SIDE_PATHS.moderations, request, async (response) => ({
        answer: await jsonAnswer(response, prepared.connection),
        costMicrosUsd: fee,
        usage: null,
      })),
    );
    return { kind: 'json', headers, body: answer };
  }

  async transcription(call: TranscriptionCall): Promise<SideAnswer> {
    const prepared = this.prepare(
      call.caller,
      call.headers,
      'audio.transcriptions',
      'transcription_per_minute_micros',
    );
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
            if (error instanceof ObjectTooLargeError) {
              throw new GatewayError(
                'request_too_large',
                `file: larger than the upload limit of ${maxBytes} bytes`,
                { param: 'file' },
              );
            }
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
      const perMinute = prepared.prices.transcription_per_minute_micros!;
      const content = await this.deps.objects.get(projectId, spoolKey);
      if (!content) throw new Error('the spooled audio vanished');
      const form = multipartBody(request.fields, { field: 'file', ...audio, content });
      const { answer, headers } = await this.run(
        prepared,
        this.plan(
          prepared,
          request.model,
          transcriptionCost(prepared.prices.transcription_max_seconds, perMinute),
        ),
        new SideExchange(
          prepared.connection,
          SIDE_PATHS.transcriptions,
          undefined,
          async (response): Promise<ReadAnswer<SideAnswer>> => {
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
              costMicrosUsd: seconds === undefined ? null : transcriptionCost(seconds, perMinute),
              usage: null,
            };
          },
          (signal) =>
            callUpstreamRaw(prepared.connection, {
              method: 'POST',
              path: SIDE_PATHS.transcriptions,
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

/** Reads a JSON answer; an unreadable one is thrown (the runner commits the reservation: the upstream may have billed). */
async function jsonAnswer(response: UpstreamResponse, connection: Connection): Promise<unknown> {
  const body = await readJsonBody(response.body, connection.name).catch(() => undefined);
  if (typeof body !== 'object' || body === null)
    throw new GatewayError('upstream_error', `${connection.name} answered with a body that is not JSON.`);
  return body;
}

/** A side endpoint's exchange: a JSON POST (or the given raw send) on the chat wire, and how to read its answer. */
class SideExchange<Answer> implements UpstreamExchange<Answer> {
  constructor(
    private readonly connection: Connection,
    private readonly path: string,
    private readonly body: unknown,
    readonly read: (response: UpstreamResponse) => Promise<ReadAnswer<Answer>>,
    private readonly raw?: (signal: AbortSignal | undefined) => Promise<UpstreamResponse>,
  ) {}

  send(signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    if (this.raw) return this.raw(signal);
    return callUpstream(this.connection, { path: this.path, body: this.body, ...(signal ? { signal } : {}) });
  }

  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo {
    return mapChatError(status, body, headers);
  }
}
