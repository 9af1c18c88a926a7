/**
 * Runs a deferred response as a job. Side effects are safe to re-run:
 *   queued       -> in_progress (conditional; a cancel that won first ends the job) -> call upstream
 *                   -> seal the result -> finish (conditional on still in_progress) -> settle.
 *   in_progress  found at claim time means a previous run died mid-call: the upstream may have
 *                answered and billed, so the response fails as interrupted and its reservation is
 *                committed in full (never called twice).
 *   finished     nothing to do.
 * A cancel that lands while the call runs aborts it (this process) or makes the finish a no-op
 * (another replica); the cancel settles the attempt, so it is settled exactly once either way.
 * The call is sent and classified through the response's background attempt and settled by one of
 * its verbs once the record is finished (ledger/background-attempt.ts holds what each is charged).
 * A responses-wire request is replayed as it is; an envelope (a target of another wire) goes
 * through the canonical model, with /v1/messages' fallback, in deferred-any-wire.ts. Either way the
 * result is stored responses-wire.
 */

import { ObjectStoreUnavailableError } from '../../errors/gateway-error.js';
import type { Upstreams } from '../../gateway/connections.js';
import type { MessagesService } from '../../gateway/messages/messages-service.js';
import type { JobContext, JobOutcome } from '../../jobs/worker.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { BackgroundEnd, SentCall } from '../../ledger/background-attempt.js';
import type { Clock } from '../../lib/clock.js';
import type { ObjectStore } from '../../objects/port.js';
import type { DeferredPatch, DeferredResponseRecord } from '../../store/deferred-responses-port.js';
import type { JobRecord } from '../../store/jobs-port.js';
import type { Store } from '../../store/port.js';
import { runAnyWire } from './deferred-any-wire.js';
import { ResponsesExchange } from './exchange.js';
import { getSealedJson, isAnyWireEnvelope, putSealedJson, resultKey } from './objects.js';
import type { RunningCalls } from './running-calls.js';
import type { ReadResult } from './upstream-result.js';

export interface ResponseRunnerDeps {
  store: Store;
  upstreams: Upstreams;
  objects: ObjectStore;
  clock: Clock;
  running: RunningCalls;
  runner: AttemptRunner;
  messages: MessagesService;
}

interface Ending {
  patch: DeferredPatch;
  /** How the attempt ends, once the record is finished. */
  end: BackgroundEnd;
}

const DONE: JobOutcome = { kind: 'done' };

export class ResponseRunner {
  constructor(private readonly deps: ResponseRunnerDeps) {}

  async run(job: JobRecord, context: JobContext): Promise<JobOutcome> {
    const { store, clock } = this.deps;
    const record = await store.deferredResponses.getById(job.resourceId);
    if (!record) return DONE;
    if (record.status === 'in_progress') {
      await this.finish(record, {
        patch: {
          status: 'failed',
          completedAt: null,
          error: {
            code: 'interrupted',
            message: 'The gateway stopped while the response was running; the upstream may have billed it.',
          },
        },
        end: (attempt) => attempt.abandon('response_interrupted'),
      });
      return DONE;
    }
    if (record.status !== 'queued') return DONE;
    // Read before the record says in_progress: an object store that is down throws here, the job
    // is retried with its backoff and the response stays queued (its attempt held, nothing sent),
    // instead of a running response that a retry could only end as interrupted, charged whole.
    const body = await getSealedJson(this.deps.objects, record.projectId, record.requestObject);
    const started = await store.deferredResponses.update(record.id, ['queued'], {
      status: 'in_progress',
      startedAt: clock.now(),
    });
    if (!started) return DONE;
    const controller = this.deps.running.start(record.id, context.signal);
    try {
      const ending = await this.call(started, body, controller.signal);
      if (ending) await this.finish(started, ending);
    } finally {
      this.deps.running.finish(record.id);
    }
    return DONE;
  }

  /** Calls the upstream; undefined when the call was aborted (a cancel or a stopping worker decides). */
  private async call(
    record: DeferredResponseRecord,
    body: unknown,
    signal: AbortSignal,
  ): Promise<Ending | undefined> {
    const connection = this.deps.upstreams.connections.get(record.connection);
    if (!connection || body === undefined) {
      return {
        patch: {
          status: 'failed',
          error: {
            code: 'unavailable',
            message: `connection ${record.connection} or the stored request is gone`,
          },
        },
        end: (attempt) => attempt.withdraw('target_gone'),
      };
    }
    if (isAnyWireEnvelope(body)) {
      const ending = await runAnyWire(this.deps, record, body, signal);
      if (ending === undefined) return undefined;
      if (ending.kind === 'failed') {
        return {
          patch: { status: 'failed', error: { code: ending.code, message: ending.message } },
          end: ending.end,
        };
      }
      return this.answered(record, ending.read, ending.sent);
    }
    const result = await this.deps.runner
      .held(record)
      .send(new ResponsesExchange(connection, body, record.price), signal);
    switch (result.kind) {
      case 'aborted':
        return undefined;
      case 'failed': {
        const code = result.error.code === 'upstream_error' ? 'upstream_error' : 'upstream_unavailable';
        return {
          patch: { status: 'failed', error: { code, message: result.error.message } },
          end: (attempt) => attempt.finish(result.sent),
        };
      }
      case 'answered':
        return this.answered(record, result.answer.read, result.sent);
      default: {
        const never: never = result;
        throw new Error(`unknown exchange result ${String(never)}`);
      }
    }
  }

  /** Seals the responses-wire result; the record's terminal patch. */
  private async answered(record: DeferredResponseRecord, read: ReadResult, sent: SentCall): Promise<Ending> {
    try {
      await putSealedJson(this.deps.objects, record.projectId, resultKey(record.id), read.result);
    } catch (error) {
      if (!(error instanceof ObjectStoreUnavailableError)) throw error;
      // The upstream answered (and billed): settle at its usage; only the answer is lost.
      return {
        patch: {
          status: 'failed',
          error: {
            code: 'object_store_unavailable',
            message:
              'The upstream answered but the object store could not keep the answer; it is charged at its usage.',
          },
        },
        end: (attempt) => attempt.answerLost(sent),
      };
    }
    return {
      patch: {
        status: read.status,
        completedAt: read.status === 'completed' ? this.deps.clock.now() : null,
        error: read.error,
        usage: read.wireUsage,
        resultObject: resultKey(record.id),
      },
      end: (attempt) => attempt.finish(sent),
    };
  }

  private async finish(record: DeferredResponseRecord, ending: Ending): Promise<void> {
    const finished = await this.deps.store.deferredResponses.update(record.id, ['in_progress'], ending.patch);
    if (!finished) {
      // A cancel won: it settled the attempt; the result (if any) is not kept.
      if (ending.patch.resultObject)
        await this.deps.objects.delete(record.projectId, ending.patch.resultObject).catch(() => false);
      return;
    }
    // The updated record: a fallback may have moved the response to another attempt.
    await ending.end(this.deps.runner.held(finished));
  }
}
