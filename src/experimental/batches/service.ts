/**
 * POST /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel.
 *
 * create: optional Idempotency-Key (present: governance semantics, replays answer 200 with the
 *   stored record; absent: no replay protection, as the vendorb API has none) ->
 *   body checks -> connection (Svc-Route or endpoints.default_connections.batches): a vendora-wire
 *   connection carries the requests inline (message batches), a chat-completions one gets an input
 *   file (chat batches: messages lines translated, chat lines as they are), others have no batch
 *   API; `endpoint` /v1/chat/completions (chat lines) only on a chat-completions one -> the input file (this
 *   Project, purpose batch) -> every line checked against the connection (lines.ts; the first
 *   uncarriable line fails the request) -> the upstream payload translated and kept as an object ->
 *   one ledger attempt reserving the sum of the lines' worst cases (owned by the batch's job, so a
 *   restart does not reap it) -> record + job + idempotency in one transaction. The job submits,
 *   polls and finalizes (job.ts).
 * cancel: validating (not yet submitted) -> cancelled at once, reservation released; in_progress ->
 *   cancelling (the job cancels upstream and collects partial results); cancelling -> unchanged;
 *   anything later -> 409. Another Project's id answers exactly like an unknown one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { attachedRun } from '../../gateway/messages/call-headers.js';
import { bindingFor } from '../../gateway/primitive-registry.js';
import { resolveConnection } from '../../gateway/resource-route.js';
import { idempotencyFor, optionalIdempotencyKey } from '../../governance/idempotency.js';
import { requireModel } from '../../governance/scopes.js';
import type { Caller } from '../../governance/service.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ObjectStore } from '../../objects/port.js';
import type { BatchCarrier, BatchRecord } from '../../store/batches-port.js';
import type { Store } from '../../store/port.js';
import { listPage, pageRequest, unknownCursor } from '../list-page.js';
import { checkBatchCreate } from './create-request.js';
import { newIds, payloadKey } from './ids.js';
import { CHAT_LINES, checkLines, MESSAGES_LINES } from './lines.js';
import { chatBatchInput, messageBatchPayload } from './translate.js';
import { batchView } from './view.js';

export const BATCH_WINDOW_MS = 24 * 3600_000;
export const BATCH_TTL_MS = 7 * 24 * 3600_000;
/** The batch's attempt outlives its window and finalization; past it the reaper commits it in full. */
export const BATCH_ATTEMPT_LEASE_MS = BATCH_WINDOW_MS + 6 * 3600_000;

export interface BatchServiceDeps {
  config: Config;
  store: Store;
  upstreams: Upstreams;
  runner: AttemptRunner;
  objects: ObjectStore;
  clock: Clock;
}

export interface CreateBatchCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
}

const notFound = (id: string) =>
  new GatewayError('resource_not_found', `No batch with id ${id}.`, { param: 'batch_id' });

export function carrierOf(connection: Connection): BatchCarrier {
  switch (connection.row.primitive) {
    case 'messages':
      return 'message-batches';
    case 'chat-completions':
      return 'chat-batches';
    case 'responses':
    case 'generate-content':
    case 'converse':
      // resolveConnection refused it already (catalogue/resource-profiles.ts BATCH_PRIMITIVES).
      throw new Error(`connection ${connection.name} (${connection.row.id}) has no batch API`);
    default: {
      const never: never = connection.row.primitive;
      throw new Error(`unknown primitive ${String(never)}`);
    }
  }
}

async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString('utf8');
}

function joined(values: string[]): string {
  return [...new Set(values)].join(',').slice(0, 200);
}

export class BatchService {
  constructor(private readonly deps: BatchServiceDeps) {}

  async create(call: CreateBatchCall): Promise<{ body: unknown }> {
    const { config, store, upstreams, runner, objects, clock } = this.deps;
    const runId = attachedRun(call.caller, call.headers);
    const key = optionalIdempotencyKey(call.headers['idempotency-key']);
    const body = checkBatchCreate(call.body);
    const connection = resolveConnection(
      upstreams,
      config.endpoints.default_connections,
      call.headers,
      'batches',
    );
    const carrier = carrierOf(connection);
    if (body.endpoint === CHAT_LINES && carrier !== 'chat-batches') {
      throw new GatewayError(
        'invalid_request',
        `endpoint: ${CHAT_LINES} lines are the batch format of a chat-completions connection; connection ${connection.name} (profile ${connection.row.id}) takes ${MESSAGES_LINES} lines`,
        { param: 'endpoint' },
      );
    }
    const { projectId, keyId } = call.caller;
    const now = clock.now();
    const idempotency =
      key === undefined
        ? null
        : idempotencyFor({
            projectId,
            keyId,
            key,
            method: 'POST',
            path: '/v1/batches',
            body: { ...(call.body as Record<string, unknown>), svc_route: connection.name },
            nowMs: now,
            retentionMs: config.idempotency.retention_hours * 3_600_000,
          });
    const earlier = idempotency ? await store.batches.findIdempotent(idempotency) : undefined;
    if (earlier) return { body: earlier.body };

    const file = await store.files.get(projectId, body.inputFileId);
    if (!file || Date.parse(file.expiresAt) <= now) {
      throw new GatewayError('resource_not_found', `No file with id ${body.inputFileId}.`, {
        param: 'input_file_id',
      });
    }
    if (file.purpose !== 'batch') {
      throw new GatewayError(
        'invalid_request',
        `input_file_id: file ${file.id} has purpose ${file.purpose}, not batch`,
        { param: 'input_file_id' },
      );
    }
    const content = await objects.get(projectId, file.id);
    if (!content)
      throw new GatewayError('resource_not_found', `No file with id ${body.inputFileId}.`, {
        param: 'input_file_id',
      });
    const lines = checkLines(await readText(content), body.endpoint, connection, upstreams, config);
    for (const line of lines) requireModel(call.caller, { model: line.plan.alias });
    const binding = bindingFor(connection.row);
    const payload =
      carrier === 'message-batches'
        ? JSON.stringify(messageBatchPayload(lines, binding, newIds()))
        : chatBatchInput(lines, binding, newIds());
    const reservation = lines.reduce((sum, line) => sum + line.plan.worstCaseMicrosUsd, 0);
    const id = newId('batch');
    const held = await runner.hold(
      {
        projectId,
        keyId,
        runId,
        endpoint: '/v1/batches',
        alias: joined(lines.map((line) => line.plan.alias)),
        connection: connection.name,
        profile: connection.row.id,
        primitive: connection.row.primitive,
        upstreamModel: joined(lines.map((line) => line.plan.upstreamModel)),
        streamed: false,
        reservationMicrosUsd: reservation,
        worstCaseTokens: lines.reduce((sum, line) => sum + line.worstCaseTokens, 0),
        request: call.caller.request,
      },
      id,
      BATCH_ATTEMPT_LEASE_MS,
    );
    const record: BatchRecord = {
      id,
      projectId,
      keyId,
      runId,
      connection: connection.name,
      carrier,
      endpoint: body.endpoint,
      inputFileId: file.id,
      completionWindow: body.completionWindow,
      status: 'validating',
      outputFileId: null,
      errorFileId: null,
      createdAt: now,
      expiresAt: now + BATCH_WINDOW_MS,
      inProgressAt: null,
      finalizingAt: null,
      completedAt: null,
      failedAt: null,
      expiredAt: null,
      cancellingAt: null,
      cancelledAt: null,
      metadata: body.metadata,
      errors: null,
      requestCounts: { total: lines.length, completed: 0, failed: 0 },
      deleteAfter: now + BATCH_TTL_MS,
      upstreamBatchId: null,
      upstreamInputFileId: null,
      submitStartedAt: null,
      attemptId: held.attemptId,
      reservationMicrosUsd: reservation,
      lines: lines.map((line) => line.plan),
    };
    let created: Awaited<ReturnType<Store['batches']['create']>>;
    try {
      await objects.put(projectId, payloadKey(id), Buffer.from(payload), { sealed: false });
      created = await store.batches.create(record, now, idempotency, batchView);
    } catch (error) {
      await held.withdraw('batch_not_created');
      await objects.delete(projectId, payloadKey(id)).catch(() => false);
      throw error;
    }
    if (created.replayed) {
      await held.withdraw('idempotent_replay');
      await objects.delete(projectId, payloadKey(id)).catch(() => false);
    }
    return { body: created.body };
  }

  private async live(caller: Caller, id: string): Promise<BatchRecord> {
    const batch = await this.deps.store.batches.get(caller.projectId, id);
    if (!batch || batch.deleteAfter <= this.deps.clock.now()) throw notFound(id);
    return batch;
  }

  /** GET /v1/batches: the Project's batches, newest first; `limit` 1-100 (default 20), `after` a batch id. */
  async list(caller: Caller, query: Record<string, unknown>): Promise<{ body: unknown }> {
    const page = pageRequest(query, { defaultLimit: 20, maxLimit: 100 });
    let after: BatchRecord | undefined;
    if (page.after !== undefined) {
      after = await this.deps.store.batches.get(caller.projectId, page.after);
      if (!after) throw unknownCursor(page.after);
    }
    const rows = await this.deps.store.batches.list(caller.projectId, {
      limit: page.limit + 1,
      after,
      now: this.deps.clock.now(),
    });
    return { body: listPage(rows, page.limit, (batch) => batchView(batch) as { id: string }) };
  }

  async get(caller: Caller, id: string): Promise<{ body: unknown }> {
    return { body: batchView(await this.live(caller, id)) };
  }

  async cancel(caller: Caller, id: string): Promise<{ body: unknown }> {
    const { store, clock } = this.deps;
    for (let round = 0; round < 3; round++) {
      const batch = await this.live(caller, id);
      const now = clock.now();
      switch (batch.status) {
        case 'validating': {
          const cancelled = await store.batches.update(id, ['validating'], {
            status: 'cancelled',
            cancellingAt: now,
            cancelledAt: now,
          });
          if (!cancelled) continue;
          await this.deps.runner.held(batch, caller.request).withdraw('batch_cancelled_before_submission');
          await this.deps.objects.delete(batch.projectId, payloadKey(id)).catch(() => false);
          return { body: batchView(cancelled) };
        }
        case 'in_progress': {
          const cancelling = await store.batches.update(id, ['in_progress'], {
            status: 'cancelling',
            cancellingAt: now,
          });
          if (!cancelling) continue;
          return { body: batchView(cancelling) };
        }
        case 'cancelling':
          return { body: batchView(batch) };
        case 'finalizing':
        case 'completed':
        case 'failed':
        case 'expired':
        case 'cancelled':
          throw new GatewayError(
            'resource_conflict',
            `Batch ${id} is ${batch.status}; it can no longer be cancelled.`,
          );
        default: {
          const never: never = batch.status;
          throw new Error(`unknown batch status ${String(never)}`);
        }
      }
    }
    throw new GatewayError(
      'resource_conflict',
      `Batch ${id} changed state while being cancelled; read it and retry.`,
    );
  }

  /** Removes batches past their 7-day TTL (their output files expire with them in the files sweep). */
  async sweep(): Promise<number> {
    const { store, clock, objects } = this.deps;
    const due = await store.batches.listExpired(clock.now(), 100);
    for (const batch of due) {
      // A no-op for a batch that settled; one that never finished is charged its whole reservation.
      await this.deps.runner.held(batch).abandon('batch_record_expired');
      await store.batches.delete(batch.id);
      await objects.delete(batch.projectId, payloadKey(batch.id)).catch(() => false);
    }
    return due.length;
  }
}
