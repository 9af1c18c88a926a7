/**
 * Speech, transcriptions, images and moderations on a chat-embeddings connection (Svc-Route or
 * the endpoint's default connection). Each call:
 *   scope + Run (X-Svc-Run-ID) -> connection -> configured price (else 501) -> strict request check
 *   (unknown fields refused before any upstream call) -> ledger reservation (true worst case, see
 *   ledger/resource-pricing.ts) -> upstream call -> settle once:
 *     2xx with a known cost: the actual cost;   upstream error status: nothing (not billed);
 *     connect refused: released;                other transport failure or unreadable answer: unknown
 *     (the whole reservation is committed and counted in unknown_attempts).
 * Speech audio is streamed back with the upstream's content type. A transcription's audio is first
 * streamed into a private spool object (so every field is checked before the upstream sees a byte,
 * whatever the part order), then streamed upstream from it, and the spool is removed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Config, ResourcePricesConfig } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { requireModel } from '../governance/scopes.js';
import type { Caller } from '../governance/service.js';
import type { Attempt, Ledger } from '../ledger/ledger.js';
import { characterCount, imagesCost, speechCost, transcriptionCost } from '../ledger/resource-pricing.js';
import { randomBase32 } from '../lib/ids.js';
import { type ObjectStore, ObjectTooLargeError } from '../objects/port.js';
import type { ObjectOwner } from '../objects/sweep.js';
import { mapChatError } from '../primitives/chat-completions/error.js';
import {
  imageCount,
  SIDE_PATHS,
  transcriptionSeconds,
} from '../primitives/chat-completions/side-endpoints.js';
import { multipartBody } from '../primitives/shared/multipart-body.js';
import { callUpstream, readJsonBody, type UpstreamResponse } from '../primitives/shared/upstream-call.js';
import { callUpstreamRaw } from '../primitives/shared/upstream-raw.js';
import { attachedRun } from './call-headers.js';
import type { Connection, Upstreams } from './connections.js';
import { type FormPart, repeatedField, unknownField } from './form-parts.js';
import { type ResourceEndpoint, resolveConnection } from './resource-route.js';
import {
  checkImages,
  checkModeration,
  checkSpeech,
  checkTranscription,
  isTranscriptionField,
  type TranscriptionField,
} from './side-requests.js';
import { settleTransportFailure, settleUnreadableAnswer, settleUpstreamStatus } from './upstream-errors.js';

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
  ledger: Ledger;
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

  private reserve(prepared: Prepared, model: string, reservation: number): Promise<Attempt> {
    return this.deps.ledger.reserve(
      {
        projectId: prepared.caller.projectId,
        keyId: prepared.caller.keyId,
        runId: prepared.runId,
        endpoint: `/v1/${prepared.endpoint.replace('.', '/')}`,
        alias: model,
        connection: prepared.connection.name,
        profile: prepared.connection.row.id,
        upstreamModel: model,
      },
      reservation,
    );
  }

  /** Sends the call; transport failures and error statuses settle the attempt and throw. */
  private async send(
    attempt: Attempt,
    connection: Connection,
    call: () => Promise<UpstreamResponse>,
  ): Promise<UpstreamResponse> {
    let response: UpstreamResponse;
    try {
      response = await call();
    } catch (error) {
      throw await settleTransportFailure(attempt, error);
    }
    if (response.status >= 200 && response.status < 300) return response;
    const body = await readJsonBody(response.body, connection.name).catch(() => undefined);
    const info = mapChatError(response.status, body, response.headers);
    throw await settleUpstreamStatus(attempt, response.status, info);
  }

  private headers(prepared: Prepared, attempt: Attempt): Record<string, string> {
    return { 'svc-route': prepared.connection.name, 'svc-attempt-id': attempt.id };
  }

  /** Reads a JSON answer; an unreadable one commits the reservation (the upstream may have billed). */
  private async jsonAnswer(
    attempt: Attempt,
    response: UpstreamResponse,
    connection: Connection,
  ): Promise<unknown> {
    const body = await readJsonBody(response.body, connection.name).catch(() => undefined);
    if (typeof body !== 'object' || body === null) {
      await settleUnreadableAnswer(attempt, response.status);
      throw new GatewayError('upstream_error', `${connection.name} answered with a body that is not JSON.`);
    }
    return body;
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
    const attempt = await this.reserve(prepared, request.model, cost);
    const response = await this.send(attempt, prepared.connection, () =>
      callUpstream(prepared.connection, { path: SIDE_PATHS.speech, body: request }),
    );
    // The upstream accepted the text: the characters are billed whether or not the client reads it all.
    await attempt.settle({
      state: 'settled',
      costMicrosUsd: cost,
      usage: null,
      outcome: 'ok',
      httpStatus: response.status,
    });
    return {
      kind: 'stream',
      headers: {
        ...this.headers(prepared, attempt),
        'content-type': contentTypeOf(response, 'application/octet-stream'),
      },
      stream: response.body,
    };
  }

  async images(call: SideCall): Promise<SideAnswer> {
    const prepared = this.prepare(call.caller, call.headers, 'images.generations', 'image_micros');
    const request = checkImages(call.body);
    const perImage = prepared.prices.image_micros!;
    const attempt = await this.reserve(prepared, request.model ?? '', imagesCost(request.n ?? 1, perImage));
    const response = await this.send(attempt, prepared.connection, () =>
      callUpstream(prepared.connection, { path: SIDE_PATHS.images, body: request }),
    );
    const body = await this.jsonAnswer(attempt, response, prepared.connection);
    const images = imageCount(body);
    await attempt.settle(
      images === undefined
        ? {
            state: 'unknown',
            costMicrosUsd: 0,
            usage: null,
            outcome: 'no_image_count',
            httpStatus: response.status,
          }
        : {
            state: 'settled',
            costMicrosUsd: imagesCost(images, perImage),
            usage: null,
            outcome: 'ok',
            httpStatus: response.status,
          },
    );
    return { kind: 'json', headers: this.headers(prepared, attempt), body };
  }

  async moderation(call: SideCall): Promise<SideAnswer> {
    const prepared = this.prepare(call.caller, call.headers, 'moderations', 'moderation_request_micros');
    const request = checkModeration(call.body);
    const fee = prepared.prices.moderation_request_micros!;
    const attempt = await this.reserve(prepared, request.model ?? '', fee);
    const response = await this.send(attempt, prepared.connection, () =>
      callUpstream(prepared.connection, { path: SIDE_PATHS.moderations, body: request }),
    );
    const body = await this.jsonAnswer(attempt, response, prepared.connection);
    await attempt.settle({
      state: 'settled',
      costMicrosUsd: fee,
      usage: null,
      outcome: 'ok',
      httpStatus: response.status,
    });
    return { kind: 'json', headers: this.headers(prepared, attempt), body };
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
      const attempt = await this.reserve(
        prepared,
        request.model,
        transcriptionCost(prepared.prices.transcription_max_seconds, perMinute),
      );
      const content = await this.deps.objects.get(projectId, spoolKey);
      if (!content) throw new Error('the spooled audio vanished');
      const form = multipartBody(request.fields, { field: 'file', ...audio, content });
      const response = await this.send(attempt, prepared.connection, () =>
        callUpstreamRaw(prepared.connection, {
          method: 'POST',
          path: SIDE_PATHS.transcriptions,
          headers: { 'content-type': form.contentType, 'content-length': String(form.contentLength) },
          body: form.body,
        }),
      );
      const contentType = contentTypeOf(response, 'text/plain; charset=utf-8');
      const headers = { ...this.headers(prepared, attempt), 'content-type': contentType };
      if (!isJson(contentType)) {
        // Text formats report no duration: the cost cannot be known, so the reservation is committed.
        const text = await response.body.text();
        await attempt.settle({
          state: 'unknown',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'duration_not_reported',
          httpStatus: response.status,
        });
        return { kind: 'text', headers, text };
      }
      const body = await this.jsonAnswer(attempt, response, prepared.connection);
      const seconds = transcriptionSeconds(body);
      await attempt.settle(
        seconds === undefined
          ? {
              state: 'unknown',
              costMicrosUsd: 0,
              usage: null,
              outcome: 'duration_not_reported',
              httpStatus: response.status,
            }
          : {
              state: 'settled',
              costMicrosUsd: transcriptionCost(seconds, perMinute),
              usage: null,
              outcome: 'ok',
              httpStatus: response.status,
            },
      );
      return { kind: 'json', headers, body };
    } finally {
      if (spooled) await this.deps.objects.delete(projectId, spoolKey).catch(() => undefined);
    }
  }

  /** Spool objects are never referenced after their request: the sweep removes any left behind. */
  static sweepOwner(): ObjectOwner {
    return { prefix: SPOOL_PREFIX, referenced: async () => false };
  }
}
