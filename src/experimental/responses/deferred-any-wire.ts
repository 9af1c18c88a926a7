/**
 * Background responses on an alias target of any wire (issue 15): the job's half of what
 * any-wire.ts does for synchronous calls. The sealed request is an envelope (the client's responses
 * body with its output bound explicit, and the Svc-Route pin); the job translates it to the
 * canonical model and routes it exactly as /v1/messages would (MessagesService.route), from the
 * target whose attempt the record holds onwards:
 *   try the target with the held attempt -> a retryable failure (nothing billed, or refused):
 *   settle that attempt, reserve a held attempt for the next eligible target, move the record to it
 *   (conditional on in_progress: a cancel that won ends the job, the new attempt released) -> ...
 *   an answer: the canonical message translated into a Response object (outbound-response.ts),
 *   read like a responses-wire answer, settled at that target's price from its usage.
 * The record always names the attempt in flight, so a cancel, the reaper or a restarted job
 * (interrupted) settles the right one. A process dying between reserving the next attempt and
 * recording it leaves that reservation to the ledger's reaper (committed in full at its lease).
 */
import type { MessageResponse, MessagesRequest } from '../../canonical/types.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { MessagesService } from '../../gateway/messages/messages-service.js';
import type { PlannedTarget } from '../../gateway/messages/route-plan.js';
import {
  type AttemptInput,
  messagesAttemptPlan,
  messagesExchange,
} from '../../gateway/messages/upstream-attempt.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { BackgroundAttempt, BackgroundEnd, SentCall } from '../../ledger/background-attempt.js';
import { attributionAfter } from '../../ledger/ledger.js';
import { type Clock, unixSeconds } from '../../lib/clock.js';
import { canonicalToResponsesResponse } from '../../primitives/responses/outbound-response.js';
import type { DeferredResponseRecord } from '../../store/deferred-responses-port.js';
import type { Store } from '../../store/port.js';
import { canonicalRequestOf } from './any-wire.js';
import type { AnyWireEnvelope } from './objects.js';
import { ATTEMPT_LEASE_MS } from './service.js';
import { type ReadResult, readUpstreamResult } from './upstream-result.js';

export type AnyWireEnding =
  | { kind: 'answered'; read: ReadResult; sent: SentCall }
  | { kind: 'failed'; code: string; message: string; end: BackgroundEnd }
  /** Aborted (a cancel or a stopping worker decides) or moved away from by a cancel. */
  | undefined;

export interface AnyWireJobDeps {
  store: Store;
  runner: AttemptRunner;
  messages: MessagesService;
  clock: Clock;
}

/** The failed record's error code: the client-facing class of the last failure. */
function failureCode(error: GatewayError): string {
  return error.code === 'upstream_error' ? 'upstream_error' : 'upstream_unavailable';
}

/** What the job tries, in order: the eligible targets from the one whose attempt the record holds. */
type Tries =
  | { kind: 'planned'; targets: PlannedTarget[]; inputOf(planned: PlannedTarget): AttemptInput }
  | { kind: 'failed'; ending: AnyWireEnding };

const unavailable = (message: string): Tries => ({
  kind: 'failed',
  ending: {
    kind: 'failed',
    code: 'unavailable',
    message,
    end: (attempt) => attempt.withdraw('target_gone'),
  },
});

/** Re-plans the envelope under the running configuration, as /v1/messages would route it. */
function triesOf(
  deps: AnyWireJobDeps,
  record: DeferredResponseRecord,
  envelope: AnyWireEnvelope,
  signal: AbortSignal,
): Tries {
  let route: ReturnType<MessagesService['route']>;
  let request: MessagesRequest;
  try {
    request = canonicalRequestOf(envelope.body, undefined);
    route = deps.messages.route({
      request,
      mode: 'portable',
      betaHeader: undefined,
      bodyBytes: Buffer.byteLength(JSON.stringify(request)),
      connection: envelope.pinned ?? undefined,
    });
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return unavailable(error.message);
  }
  const { plan, inputBoundTokens } = route;
  const start = plan.eligible.findIndex(
    (planned) =>
      planned.target.connection.name === record.connection &&
      planned.target.upstreamModel === record.upstreamModel,
  );
  if (start < 0) {
    return unavailable(
      `model ${record.model} no longer has an eligible target on connection ${record.connection}`,
    );
  }
  return {
    kind: 'planned',
    targets: plan.eligible.slice(start),
    inputOf: (planned) => ({
      planned,
      mode: 'portable',
      request,
      rawBody: request as unknown as Record<string, unknown>,
      betaTokens: [],
      inputBoundTokens,
      subject: {
        projectId: record.projectId,
        keyId: record.keyId,
        runId: record.runId,
        endpoint: '/v1/responses',
        alias: record.model,
      },
      clientSignal: signal,
    }),
  };
}

export async function runAnyWire(
  deps: AnyWireJobDeps,
  record: DeferredResponseRecord,
  envelope: AnyWireEnvelope,
  signal: AbortSignal,
): Promise<AnyWireEnding> {
  const tries = triesOf(deps, record, envelope, signal);
  if (tries.kind === 'failed') return tries.ending;
  const { targets, inputOf } = tries;
  let current = record;
  for (const [index, planned] of targets.entries()) {
    const result = await deps.runner.held(current).send(messagesExchange(inputOf(planned)), signal);
    switch (result.kind) {
      case 'aborted':
        return undefined;
      case 'answered': {
        const object = canonicalToResponsesResponse(result.answer as MessageResponse, {
          responseId: record.id,
          createdAt: unixSeconds(record.createdAt),
          completedAt: unixSeconds(deps.clock.now()),
          model: record.model,
          background: true,
          request: envelope.body,
        });
        return {
          kind: 'answered',
          read: readUpstreamResult(object),
          sent: result.sent,
        };
      }
      case 'failed': {
        const next = targets[index + 1];
        if (!result.retryable || next === undefined || signal.aborted) {
          const code = failureCode(result.error);
          const { sent } = result;
          return {
            kind: 'failed',
            code,
            message: result.error.message,
            end: (attempt) => attempt.finish(sent),
          };
        }
        const failure = result.errorType ?? result.error.code;
        const moved = await moveTo(deps, current, next, inputOf(next), result.sent, failure);
        if (moved.kind !== 'moved') return moved.kind === 'gone' ? undefined : moved.ending;
        const from = planned.target.connection.name;
        deps.runner.fallback(record.model, from, next.target.connection.name, failure);
        current = moved.record;
        break;
      }
      default: {
        const never: never = result;
        throw new Error(`unknown exchange result ${String(never)}`);
      }
    }
  }
  throw new Error('unreachable: the last target returns');
}

type Move =
  | { kind: 'moved'; record: DeferredResponseRecord }
  | { kind: 'gone' }
  | { kind: 'refused'; ending: AnyWireEnding };

/** Settles the failed attempt, holds one for the next target and records it (see the header). */
async function moveTo(
  deps: AnyWireJobDeps,
  record: DeferredResponseRecord,
  next: PlannedTarget,
  input: AttemptInput,
  failed: SentCall,
  failure: string,
): Promise<Move> {
  await deps.runner.held(record).finish(failed);
  // The next attempt serves the same client request: the log gives it the failed one's call, tags
  // and trace, and names the failed one as tried (read back: the job has no request record).
  const previous = await deps.store.requestLog.get(record.projectId, record.attemptId);
  const plan = {
    ...messagesAttemptPlan(input),
    ...(previous ? { attribution: attributionAfter(previous, failure) } : {}),
  };
  let held: BackgroundAttempt;
  try {
    held = await deps.runner.hold(plan, record.id, ATTEMPT_LEASE_MS);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    // The failed attempt is settled already; the finish's settlement of it is a no-op.
    return {
      kind: 'refused',
      ending: {
        kind: 'failed',
        code: error.code,
        message: error.message,
        end: (attempt) => attempt.finish(failed),
      },
    };
  }
  const moved = await deps.store.deferredResponses.update(record.id, ['in_progress'], {
    connection: next.target.connection.name,
    upstreamModel: next.target.upstreamModel,
    price: next.target.price,
    attemptId: held.attemptId,
    reservationMicrosUsd: plan.reservationMicrosUsd,
  });
  if (!moved) {
    await held.withdraw('cancelled_before_fallback');
    return { kind: 'gone' };
  }
  return { kind: 'moved', record: moved };
}
