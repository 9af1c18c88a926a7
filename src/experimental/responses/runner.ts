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
 */

import type { Upstreams } from '../../gateway/connections.js';
import { settleDurable } from '../../gateway/durable-settlement.js';
import type { JobContext, JobOutcome } from '../../jobs/worker.js';
import type { Settlement } from '../../ledger/ledger.js';
import { actualCost } from '../../ledger/pricing.js';
import type { Clock } from '../../lib/clock.js';
import type { ObjectStore } from '../../objects/port.js';
import { mapResponsesError } from '../../primitives/responses/error.js';
import { callUpstream, readJsonBody, type UpstreamFailure } from '../../primitives/shared/upstream-call.js';
import type { DeferredPatch, DeferredResponseRecord } from '../../store/deferred-responses-port.js';
import type { JobRecord } from '../../store/jobs-port.js';
import type { Store } from '../../store/port.js';
import { getSealedJson, putSealedJson, resultKey } from './objects.js';
import type { RunningCalls } from './running-calls.js';
import { readUpstreamResult } from './upstream-result.js';

export interface ResponseRunnerDeps {
  store: Store;
  upstreams: Upstreams;
  objects: ObjectStore;
  clock: Clock;
  running: RunningCalls;
}

interface Ending {
  patch: DeferredPatch;
  settlement: Settlement;
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
        settlement: {
          state: 'unknown',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'interrupted',
          httpStatus: null,
        },
      });
      return DONE;
    }
    if (record.status !== 'queued') return DONE;
    const started = await store.deferredResponses.update(record.id, ['queued'], {
      status: 'in_progress',
      startedAt: clock.now(),
    });
    if (!started) return DONE;
    const controller = this.deps.running.start(record.id, context.signal);
    try {
      const ending = await this.call(started, controller.signal);
      if (ending) await this.finish(started, ending);
    } finally {
      this.deps.running.finish(record.id);
    }
    return DONE;
  }

  /** Calls the upstream; undefined when the call was aborted (a cancel or a stopping worker decides). */
  private async call(record: DeferredResponseRecord, signal: AbortSignal): Promise<Ending | undefined> {
    const connection = this.deps.upstreams.connections.get(record.connection);
    const body = await getSealedJson(this.deps.objects, record.projectId, record.requestObject);
    if (!connection || body === undefined) {
      return failed(
        'unavailable',
        `connection ${record.connection} or the stored request is gone`,
        'released',
        null,
      );
    }
    let response: Awaited<ReturnType<typeof callUpstream>>;
    try {
      response = await callUpstream(connection, { path: '/responses', body, signal });
    } catch (error) {
      const failure = error as UpstreamFailure;
      if (failure.kind === 'aborted') return undefined;
      return failed(
        'upstream_unavailable',
        failure.message,
        failure.kind === 'connect' ? 'released' : 'unknown',
        null,
      );
    }
    let answer: unknown;
    try {
      answer = await readJsonBody(response.body, connection.name);
    } catch (error) {
      if ((error as UpstreamFailure).kind === 'aborted') return undefined;
      return failed('upstream_unavailable', 'the upstream answer was lost', 'unknown', response.status);
    }
    if (response.status < 200 || response.status >= 300) {
      const info = mapResponsesError(response.status, answer, response.headers);
      return failed('upstream_error', info.message, 'settled', response.status);
    }
    let read: ReturnType<typeof readUpstreamResult>;
    try {
      read = readUpstreamResult(answer);
    } catch (error) {
      return failed(
        'upstream_error',
        `unreadable upstream answer: ${(error as Error).message}`,
        'unknown',
        response.status,
      );
    }
    await putSealedJson(this.deps.objects, record.projectId, resultKey(record.id), read.result);
    const settlement: Settlement = read.usage
      ? {
          state: 'settled',
          costMicrosUsd: actualCost(record.price, read.usage),
          usage: read.usage,
          outcome: 'ok',
          httpStatus: response.status,
        }
      : { state: 'unknown', costMicrosUsd: 0, usage: null, outcome: 'no_usage', httpStatus: response.status };
    return {
      patch: {
        status: read.status,
        completedAt: read.status === 'completed' ? this.deps.clock.now() : null,
        error: read.error,
        usage: read.wireUsage,
        resultObject: resultKey(record.id),
      },
      settlement,
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
    await settleDurable(
      this.deps.store,
      record.attemptId,
      record.createdAt,
      this.deps.clock.now(),
      ending.settlement,
    );
  }
}

function failed(
  code: string,
  message: string,
  state: Settlement['state'],
  httpStatus: number | null,
): Ending {
  return {
    patch: { status: 'failed', error: { code, message } },
    settlement: { state, costMicrosUsd: 0, usage: null, outcome: code, httpStatus },
  };
}
