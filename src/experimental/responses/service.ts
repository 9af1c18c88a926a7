/**
 * POST/GET/DELETE /v1/responses and /v1/responses/{id}/cancel (SPEC 3 "Deferred response", 4.4).
 *
 * create:  check the body -> the alias's first target (or its target on the Svc-Route connection)
 *          decides the path:
 *          responses wire, not streamed: the body as it is, on that target -> reserve the worst
 *            case (body bytes + per-image/file bounds as input, max_output_tokens as output) ->
 *            synchronous: call, settle from the usage, answer (never stored);
 *            background:  seal the request, store the record (queued) with its job, answer queued.
 *          any other wire, or streamed: through the canonical model with /v1/messages' routing ->
 *            synchronous or streamed: any-wire.ts;
 *            background: route now (400 when no target is eligible), reserve the first eligible
 *              target's worst case, seal the envelope, store the record with its job; the job
 *              translates, falls back and settles (deferred-any-wire.ts).
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
import type { MessagesRequest } from '../../canonical/types.js';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { attachedRun } from '../../gateway/messages/call-headers.js';
import type { MessagesService } from '../../gateway/messages/messages-service.js';
import { skippedHeader } from '../../gateway/messages/route-plan.js';
import { messagesAttemptPlan } from '../../gateway/messages/upstream-attempt.js';
import { namedConnection, svcRoute, targetOn } from '../../gateway/resource-route.js';
import type { Caller } from '../../governance/service.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { AttemptPlan } from '../../ledger/ledger.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { inputTokenBound, type Price, worstCaseCost } from '../../money/pricing.js';
import type { ObjectStore } from '../../objects/port.js';
import { type DeferredResponseRecord, FINISHED_STATUSES } from '../../store/deferred-responses-port.js';
import type { Store } from '../../store/port.js';
import { type AnyWireAnswer, canonicalRequestOf, serveAnyWire } from './any-wire.js';
import { ResponsesExchange } from './exchange.js';
import { type AnyWireEnvelope, getSealedJson, putSealedJson, requestKey, resultKey } from './objects.js';
import { checkResponsesRequest, type ResponsesCall, upstreamBody } from './request.js';
import type { RunningCalls } from './running-calls.js';
import { deletedView, responseView, type StoredResult } from './view.js';

export const RESPONSE_TTL_MS = 24 * 3600_000;
export const REAP_AFTER_READ_MS = 15 * 60_000;
/** Lease of a deferred response's ledger attempt: past the TTL, the reaper commits it in full. */
export const ATTEMPT_LEASE_MS = RESPONSE_TTL_MS + 3600_000;

export interface ResponsesServiceDeps {
  config: Config;
  store: Store;
  upstreams: Upstreams;
  runner: AttemptRunner;
  objects: ObjectStore;
  clock: Clock;
  running: RunningCalls;
  messages: MessagesService;
}

export interface CreateCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
  bodyBytes: number;
  /** Fires when the client goes away (streamed and synchronous answers). */
  clientSignal: CancelSignal;
}

export interface ServiceAnswer {
  headers: Record<string, string>;
  body: unknown;
}

/** The connection Svc-Route names, if any (400 when it names none configured). */
function pinnedConnection(upstreams: Upstreams, headers: IncomingHttpHeaders): Connection | undefined {
  const name = svcRoute(headers);
  return name === undefined ? undefined : namedConnection(upstreams, name);
}

const notFound = (id: string) =>
  new GatewayError('resource_not_found', `No response with id ${id}.`, { param: 'response_id' });

export class ResponsesService {
  constructor(private readonly deps: ResponsesServiceDeps) {}

  /**
   * The alias's first target (or its target on the Svc-Route connection) decides the path: a
   * responses-wire target serves the body as it is (synchronous or background); any other wire,
   * and every streamed request, goes through the canonical model with /v1/messages' routing.
   */
  async create(call: CreateCall): Promise<AnyWireAnswer> {
    const runId = attachedRun(call.caller, call.headers);
    const { config, upstreams } = this.deps;
    const request = checkResponsesRequest(call.body, config.responses.default_max_output_tokens);
    if (request.background && request.stream) {
      throw new GatewayError(
        'unsupported_field',
        'stream: a background response is not streamed; poll GET /v1/responses/{id} for it',
        { param: 'stream' },
      );
    }
    const pinned = pinnedConnection(upstreams, call.headers);
    const alias = this.deps.messages.alias(request.model);
    const first = pinned ?? alias.targets[0]!.connection;
    if (first.row.primitive === 'responses' && !request.stream) {
      // A pinned connection without a target of the alias is the header's fault, as on other wires.
      const param = pinned ? 'svc-route' : 'model';
      return { kind: 'json', ...(await this.asIs(call, runId, request, first, param)) };
    }
    const canonical = canonicalRequestOf(request.body, config.responses.default_max_output_tokens);
    if (request.background) {
      return { kind: 'json', ...(await this.deferAnyWire(call, runId, request, canonical, pinned?.name)) };
    }
    return serveAnyWire(this.deps.messages, this.deps.clock, canonical, {
      caller: call.caller,
      runId,
      body: request.body,
      connection: pinned?.name,
      clientSignal: call.clientSignal,
    });
  }

  /** The body forwarded to a responses-wire connection with only the model replaced. */
  private async asIs(
    call: CreateCall,
    runId: string | null,
    request: ResponsesCall,
    connection: Connection,
    param: string,
  ): Promise<ServiceAnswer> {
    const { config, upstreams } = this.deps;
    const target = targetOn(upstreams, request.model, connection, param);
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
    const plan: AttemptPlan = {
      projectId: call.caller.projectId,
      keyId: call.caller.keyId,
      runId,
      endpoint: '/v1/responses',
      alias: request.model,
      connection: connection.name,
      profile: connection.row.id,
      primitive: connection.row.primitive,
      upstreamModel: target.upstreamModel,
      streamed: false,
      reservationMicrosUsd: reservation,
      worstCaseTokens: inputBound + request.maxOutputTokens,
      request: call.caller.request,
    };
    const body = upstreamBody(request, target.upstreamModel);
    const headers = { 'svc-route': connection.name };
    if (!request.background) {
      const result = await this.deps.runner.call(plan, new ResponsesExchange(connection, body, target.price));
      if (!result.ok) throw result.error;
      if (result.answer.read.usage === null) {
        throw new GatewayError(
          'upstream_error',
          'The upstream answer carries no readable usage; its cost was committed at the reservation.',
        );
      }
      const reply = {
        ...(result.answer.body as Record<string, unknown>),
        id: newId('resp'),
        model: request.model,
        background: false,
        store: false,
      };
      return { headers: { ...headers, 'svc-attempt-id': result.attemptId }, body: reply };
    }

    return this.defer(call, runId, plan, target.price, body, headers);
  }

  /**
   * A background response through the canonical model: routed now like /v1/messages (the routed-away
   * targets observed and named in Svc-Route-Skipped), its first eligible target's worst case held.
   */
  private async deferAnyWire(
    call: CreateCall,
    runId: string | null,
    request: ResponsesCall,
    canonical: MessagesRequest,
    pinned: string | undefined,
  ): Promise<ServiceAnswer> {
    const { alias, plan, inputBoundTokens } = this.deps.messages.route({
      request: canonical,
      mode: 'portable',
      betaHeader: undefined,
      bodyBytes: Buffer.byteLength(JSON.stringify(canonical)),
      connection: pinned,
    });
    for (const away of plan.skipped) {
      this.deps.runner.routedAway(alias.alias, away.connection, away.code, call.caller.request, away.reasons);
    }
    const planned = plan.eligible[0]!;
    const attemptPlan = messagesAttemptPlan({
      planned,
      mode: 'portable',
      request: canonical,
      rawBody: {},
      betaTokens: [],
      inputBoundTokens,
      subject: {
        projectId: call.caller.projectId,
        keyId: call.caller.keyId,
        runId,
        endpoint: '/v1/responses',
        alias: alias.alias,
        request: call.caller.request,
      },
      clientSignal: call.clientSignal,
    });
    const { background: _background, stream: _stream, ...body } = request.body;
    const envelope: AnyWireEnvelope = {
      kind: 'canonical',
      body: { ...body, max_output_tokens: request.maxOutputTokens },
      pinned: pinned ?? null,
    };
    const headers: Record<string, string> = { 'svc-route': planned.target.connection.name };
    if (plan.skipped.length > 0) headers['svc-route-skipped'] = skippedHeader(plan.skipped);
    return this.defer(call, runId, attemptPlan, planned.target.price, envelope, headers);
  }

  /** Holds the attempt, seals the request, stores the record (queued) with its job; answers queued. */
  private async defer(
    call: CreateCall,
    runId: string | null,
    plan: AttemptPlan,
    price: Price,
    sealedRequest: unknown,
    headers: Record<string, string>,
  ): Promise<ServiceAnswer> {
    const { clock } = this.deps;
    try {
      this.deps.objects.requireSealing('background responses');
    } catch (error) {
      throw new GatewayError('endpoint_not_served', (error as Error).message);
    }
    const id = newId('resp');
    const held = await this.deps.runner.hold(plan, id, ATTEMPT_LEASE_MS);
    const now = clock.now();
    const record: DeferredResponseRecord = {
      id,
      projectId: call.caller.projectId,
      keyId: call.caller.keyId,
      runId,
      connection: plan.connection,
      model: plan.alias,
      upstreamModel: plan.upstreamModel,
      status: 'queued',
      createdAt: now,
      startedAt: null,
      completedAt: null,
      error: null,
      usage: null,
      requestObject: requestKey(id),
      resultObject: null,
      price,
      attemptId: held.attemptId,
      reservationMicrosUsd: plan.reservationMicrosUsd,
      firstReadAt: null,
      reapAt: now + RESPONSE_TTL_MS,
    };
    try {
      await putSealedJson(this.deps.objects, record.projectId, record.requestObject, sealedRequest);
      await this.deps.store.deferredResponses.create(record, now);
    } catch (error) {
      await held.withdraw('request_not_stored');
      await this.deps.objects.delete(record.projectId, record.requestObject).catch(() => false);
      throw error;
    }
    return {
      headers: { ...headers, 'svc-attempt-id': held.attemptId },
      body: responseView(record, undefined),
    };
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
      const _now = clock.now();
      switch (record.status) {
        case 'queued': {
          const cancelled = await store.deferredResponses.update(id, ['queued'], { status: 'cancelled' });
          if (!cancelled) continue;
          await this.deps.runner.held(record, caller.request).withdraw('queued_response_cancelled');
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
          // The updated record: a fallback may have moved the response to another attempt.
          await this.deps.runner.held(cancelled, caller.request).abandon('response_cancelled_running');
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
    const _now = this.deps.clock.now();
    if (record.status === 'queued' || record.status === 'in_progress') {
      const ended = await this.deps.store.deferredResponses.update(record.id, [record.status], {
        status: 'failed',
        error: { code: 'expired', message: 'The response did not finish within its 24-hour lifetime.' },
      });
      if (ended) {
        this.deps.running.abort(record.id);
        const attempt = this.deps.runner.held(ended);
        if (record.status === 'queued') await attempt.withdraw('queued_response_expired');
        else await attempt.abandon('response_expired_running');
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
