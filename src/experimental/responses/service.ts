/**
 * POST/GET/DELETE /v1/responses and /v1/responses/{id}/cancel (SPEC 3 "Deferred response", 4.4).
 *
 * create:  check the body -> pick the connection (Svc-Route or default; responses wire only) ->
 *          map the alias to its target on that connection -> reserve the worst case (body bytes +
 *          per-image/file bounds as input, max_output_tokens as output) ->
 *            synchronous: call, settle from the usage, answer (never stored);
 *            background:  seal the request, store the record (queued) with its job, answer queued.
 * get:     no upstream call, no ledger event; Retry-After while queued or running; the first GET
 *          of a finished response moves its reaping to 15 minutes later (24 hours at most).
 * cancel:  queued -> cancelled, reservation released (nothing reached the upstream);
 *          running -> cancelled, upstream aborted, reservation committed (it may have been billed);
 *          finished -> 409.
 * delete:  queued or running -> 409 (cancel first); finished -> record and both sealed objects
 *          removed, accounting untouched.
 * Another Project's id answers exactly like an unknown one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { settleDurable } from '../../gateway/durable-settlement.js';
import { attachedRun } from '../../gateway/messages/call-headers.js';
import { resolveConnection, targetOn } from '../../gateway/resource-route.js';
import {
  settleTransportFailure,
  settleUnreadableAnswer,
  settleUpstreamStatus,
} from '../../gateway/upstream-errors.js';
import type { Caller } from '../../governance/service.js';
import type { Ledger } from '../../ledger/ledger.js';
import { actualCost, inputTokenBound, worstCaseCost } from '../../ledger/pricing.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ObjectStore } from '../../objects/port.js';
import { mapResponsesError } from '../../primitives/responses/error.js';
import { callUpstream, readJsonBody } from '../../primitives/shared/upstream-call.js';
import { type DeferredResponseRecord, FINISHED_STATUSES } from '../../store/deferred-responses-port.js';
import type { Store } from '../../store/port.js';
import { getSealedJson, putSealedJson, requestKey, resultKey } from './objects.js';
import { checkResponsesRequest, upstreamBody } from './request.js';
import type { RunningCalls } from './running-calls.js';
import { readUpstreamResult } from './upstream-result.js';
import { deletedView, responseView, type StoredResult } from './view.js';

export const RESPONSE_TTL_MS = 24 * 3600_000;
export const REAP_AFTER_READ_MS = 15 * 60_000;
/** Lease of a deferred response's ledger attempt: past the TTL, the reaper commits it in full. */
const ATTEMPT_LEASE_MS = RESPONSE_TTL_MS + 3600_000;

export interface ResponsesServiceDeps {
  config: Config;
  store: Store;
  upstreams: Upstreams;
  ledger: Ledger;
  objects: ObjectStore;
  clock: Clock;
  running: RunningCalls;
}

export interface CreateCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
  bodyBytes: number;
}

export interface ServiceAnswer {
  headers: Record<string, string>;
  body: unknown;
}

const notFound = (id: string) =>
  new GatewayError('resource_not_found', `No response with id ${id}.`, { param: 'response_id' });

export class ResponsesService {
  constructor(private readonly deps: ResponsesServiceDeps) {}

  async create(call: CreateCall): Promise<ServiceAnswer> {
    const runId = attachedRun(call.caller, call.headers);
    const { config, upstreams, ledger, clock } = this.deps;
    const request = checkResponsesRequest(call.body, config.responses.default_max_output_tokens);
    const connection = resolveConnection(
      upstreams,
      config.endpoints.default_connections,
      call.headers,
      'responses',
    );
    const target = targetOn(upstreams, request.model, connection, 'model');
    const inputBound = inputTokenBound(
      {
        bodyBytes: call.bodyBytes,
        embeddedDataBytes: 0,
        images: request.images,
        documents: request.documents,
      },
      {
        imageTokens: config.ledger.image_input_bound_tokens,
        documentTokens: config.ledger.document_input_bound_tokens,
      },
    );
    const reservation = worstCaseCost(target.price, inputBound, request.maxOutputTokens);
    const subject = {
      projectId: call.caller.projectId,
      keyId: call.caller.keyId,
      runId,
      endpoint: '/v1/responses',
      alias: request.model,
      connection: connection.name,
      profile: connection.row.id,
      upstreamModel: target.upstreamModel,
    };
    const body = upstreamBody(request, target.upstreamModel);
    const headers = { 'svc-route': connection.name };
    if (!request.background)
      return this.synchronous(subject, reservation, body, target.price, connection, request.model, headers);

    try {
      this.deps.objects.requireSealing('background responses');
    } catch (error) {
      throw new GatewayError('endpoint_not_served', (error as Error).message);
    }
    const id = newId('resp');
    const attempt = await ledger.reserve(subject, reservation, { resourceId: id, leaseMs: ATTEMPT_LEASE_MS });
    const now = clock.now();
    const record: DeferredResponseRecord = {
      id,
      projectId: call.caller.projectId,
      keyId: call.caller.keyId,
      runId,
      connection: connection.name,
      model: request.model,
      upstreamModel: target.upstreamModel,
      status: 'queued',
      createdAt: now,
      startedAt: null,
      completedAt: null,
      error: null,
      usage: null,
      requestObject: requestKey(id),
      resultObject: null,
      price: target.price,
      attemptId: attempt.id,
      reservationMicrosUsd: reservation,
      firstReadAt: null,
      reapAt: now + RESPONSE_TTL_MS,
    };
    try {
      await putSealedJson(this.deps.objects, record.projectId, record.requestObject, body);
      await this.deps.store.deferredResponses.create(record, now);
    } catch (error) {
      await attempt.settle({
        state: 'released',
        costMicrosUsd: 0,
        usage: null,
        outcome: 'not_stored',
        httpStatus: null,
      });
      await this.deps.objects.delete(record.projectId, record.requestObject).catch(() => false);
      throw error;
    }
    return { headers: { ...headers, 'svc-attempt-id': attempt.id }, body: responseView(record, undefined) };
  }

  private async synchronous(
    subject: Parameters<Ledger['reserve']>[0],
    reservation: number,
    body: Record<string, unknown>,
    price: DeferredResponseRecord['price'],
    connection: Connection,
    alias: string,
    headers: Record<string, string>,
  ): Promise<ServiceAnswer> {
    const attempt = await this.deps.ledger.reserve(subject, reservation);
    const answerHeaders = { ...headers, 'svc-attempt-id': attempt.id };
    let response: Awaited<ReturnType<typeof callUpstream>>;
    try {
      response = await callUpstream(connection, { path: '/responses', body });
    } catch (error) {
      throw await settleTransportFailure(attempt, error);
    }
    const answer = await readJsonBody(response.body, connection.name).catch(() => undefined);
    if (response.status < 200 || response.status >= 300) {
      const info = mapResponsesError(response.status, answer, response.headers);
      throw await settleUpstreamStatus(attempt, response.status, {
        status: info.status,
        type: info.type,
        message: info.message,
        retryAfter: info.retryAfter,
      });
    }
    let usage: ReturnType<typeof readUpstreamResult>['usage'];
    try {
      usage = readUpstreamResult(answer).usage;
    } catch {
      usage = null;
    }
    if (usage === null) {
      await settleUnreadableAnswer(attempt, response.status);
      throw new GatewayError(
        'upstream_error',
        'The upstream answer carries no readable usage; its cost was committed at the reservation.',
      );
    }
    await attempt.settle({
      state: 'settled',
      costMicrosUsd: actualCost(price, usage),
      usage,
      outcome: 'ok',
      httpStatus: response.status,
    });
    const reply = {
      ...(answer as Record<string, unknown>),
      id: newId('resp'),
      model: alias,
      background: false,
      store: false,
    };
    return { headers: answerHeaders, body: reply };
  }

  /** The record of this Project, or 404; a record past its reaping time is gone already. */
  private async live(caller: Caller, id: string): Promise<DeferredResponseRecord> {
    const record = await this.deps.store.deferredResponses.get(caller.projectId, id);
    if (!record) throw notFound(id);
    if (record.reapAt <= this.deps.clock.now()) {
      await this.reap(record).catch(() => undefined);
      throw notFound(id);
    }
    return record;
  }

  private async result(record: DeferredResponseRecord): Promise<StoredResult | undefined> {
    if (record.resultObject === null) return undefined;
    return (await getSealedJson(this.deps.objects, record.projectId, record.resultObject)) as
      | StoredResult
      | undefined;
  }

  async get(caller: Caller, id: string): Promise<ServiceAnswer> {
    let record = await this.live(caller, id);
    const now = this.deps.clock.now();
    if (FINISHED_STATUSES.includes(record.status) && record.firstReadAt === null) {
      record =
        (await this.deps.store.deferredResponses.update(record.id, FINISHED_STATUSES, {
          firstReadAt: now,
          reapAt: Math.min(record.reapAt, now + REAP_AFTER_READ_MS),
        })) ?? record;
    }
    const headers: Record<string, string> = {};
    if (record.status === 'queued' || record.status === 'in_progress') {
      headers['retry-after'] = String(this.deps.config.responses.retry_after_seconds);
    }
    return { headers, body: responseView(record, await this.result(record)) };
  }

  async cancel(caller: Caller, id: string): Promise<ServiceAnswer> {
    const { store, clock } = this.deps;
    for (let round = 0; round < 3; round++) {
      const record = await this.live(caller, id);
      const now = clock.now();
      switch (record.status) {
        case 'queued': {
          const cancelled = await store.deferredResponses.update(id, ['queued'], { status: 'cancelled' });
          if (!cancelled) continue;
          await settleDurable(store, record.attemptId, record.createdAt, now, {
            state: 'released',
            costMicrosUsd: 0,
            usage: null,
            outcome: 'cancelled_queued',
            httpStatus: null,
          });
          return { headers: {}, body: responseView(cancelled, undefined) };
        }
        case 'in_progress': {
          const cancelled = await store.deferredResponses.update(id, ['in_progress'], {
            status: 'cancelled',
            error: {
              code: 'cancelled_while_running',
              message:
                'Cancelled while running: the upstream may have billed this request; its full reservation was committed.',
            },
          });
          if (!cancelled) continue;
          this.deps.running.abort(id);
          await settleDurable(store, record.attemptId, record.createdAt, now, {
            state: 'unknown',
            costMicrosUsd: 0,
            usage: null,
            outcome: 'cancelled_running',
            httpStatus: null,
          });
          return { headers: {}, body: responseView(cancelled, undefined) };
        }
        case 'completed':
        case 'failed':
        case 'cancelled':
        case 'incomplete':
          throw new GatewayError(
            'resource_conflict',
            `Response ${id} is already ${record.status}; there is nothing to cancel.`,
          );
        default: {
          const never: never = record.status;
          throw new Error(`unknown response status ${String(never)}`);
        }
      }
    }
    throw new GatewayError(
      'resource_conflict',
      `Response ${id} changed state while being cancelled; read it and retry.`,
    );
  }

  async delete(caller: Caller, id: string): Promise<ServiceAnswer> {
    const record = await this.live(caller, id);
    if (!FINISHED_STATUSES.includes(record.status)) {
      throw new GatewayError(
        'resource_conflict',
        `Response ${id} is ${record.status}: an answer is still owed; cancel it first.`,
      );
    }
    const deleted = await this.deps.store.deferredResponses.deleteFinished(caller.projectId, id);
    if (!deleted) throw notFound(id);
    await this.removeObjects(deleted);
    return { headers: {}, body: deletedView(id) };
  }

  private async removeObjects(record: DeferredResponseRecord): Promise<void> {
    await this.deps.objects.delete(record.projectId, record.requestObject);
    await this.deps.objects.delete(record.projectId, resultKey(record.id));
  }

  /** Removes a record due for reaping. One still owed an answer is ended first (its reservation settled). */
  async reap(record: DeferredResponseRecord): Promise<void> {
    const now = this.deps.clock.now();
    if (record.status === 'queued' || record.status === 'in_progress') {
      const ended = await this.deps.store.deferredResponses.update(record.id, [record.status], {
        status: 'failed',
        error: { code: 'expired', message: 'The response did not finish within its 24-hour lifetime.' },
      });
      if (ended) {
        this.deps.running.abort(record.id);
        await settleDurable(this.deps.store, record.attemptId, record.createdAt, now, {
          state: record.status === 'queued' ? 'released' : 'unknown',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'expired',
          httpStatus: null,
        });
      }
    }
    await this.deps.store.deferredResponses.delete(record.id);
    await this.removeObjects(record);
  }

  /** The sweeper: reaps every record whose time has come. */
  async sweep(): Promise<number> {
    const due = await this.deps.store.deferredResponses.listDue(this.deps.clock.now(), 100);
    for (const record of due) await this.reap(record);
    return due.length;
  }
}
