/**
 * The batch job: one state machine per batch, re-entrant after a crash (the job resumes from its
 * lease on this replica after a restart, or on another one).
 *
 *   validating  -> mark in_progress + submit_started (durable) -> submit upstream -> record its id
 *   in_progress -> poll upstream (again after batch_poll_interval) until it ended
 *   cancelling  -> ask the upstream to cancel (idempotent there), poll until it ended
 *   ended       -> finalizing with the output/error file ids fixed -> read results up to the
 *                  ceiling -> write our files -> settle the attempt -> completed | expired | cancelled
 *   (finalizing found at claim time: the previous run died mid-way; it is redone from the upstream.)
 *
 * Never repeated blindly: a batch found in_progress with submit_started set but no upstream id
 * died during its submission; the upstream may have accepted it, so it fails and its whole
 * reservation is committed (what each ending is charged: ledger/background-attempt.ts). Ending
 * the attempt twice is a no-op in the store; object writes overwrite the same keys; file records
 * are inserted only when absent.
 */

import type { Readable } from 'node:stream';
import type { Config } from '../../config/schema.js';
import type { Upstreams } from '../../gateway/connections.js';
import { bindingFor } from '../../gateway/primitive-registry.js';
import type { JobContext, JobOutcome } from '../../jobs/worker.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { BackgroundEnd } from '../../ledger/background-attempt.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ObjectStore } from '../../objects/port.js';
import { UpstreamFailure } from '../../primitives/shared/upstream-call.js';
import type { BatchError, BatchPatch, BatchRecord, BatchStatus } from '../../store/batches-port.js';
import type { JobRecord } from '../../store/jobs-port.js';
import type { Store } from '../../store/port.js';
import { newIds, payloadKey } from './ids.js';
import { CHAT_LINES, MESSAGES_LINES } from './lines.js';
import { buildOutputs } from './translate.js';
import {
  cancelBatch,
  pollBatch,
  readResults,
  submitBatch,
  UpstreamRejected,
  type UpstreamState,
} from './upstream.js';

export interface BatchJobDeps {
  config: Config;
  store: Store;
  upstreams: Upstreams;
  objects: ObjectStore;
  clock: Clock;
  runner: AttemptRunner;
}

const DONE: JobOutcome = { kind: 'done' };

async function readBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export class BatchJob {
  constructor(private readonly deps: BatchJobDeps) {}

  private get later(): JobOutcome {
    return { kind: 'retry', afterMs: this.deps.config.jobs.batch_poll_interval_ms };
  }

  async run(job: JobRecord, context: JobContext): Promise<JobOutcome> {
    const batch = await this.deps.store.batches.getById(job.resourceId);
    if (!batch) return DONE;
    switch (batch.status) {
      case 'validating':
        return this.submit(batch, context.signal);
      case 'in_progress':
      case 'cancelling':
        if (batch.upstreamBatchId === null) {
          if (batch.submitStartedAt !== null)
            return this.fail(
              batch,
              'submission_interrupted',
              'The gateway stopped while submitting the batch; the upstream may have accepted it.',
              (attempt) => attempt.abandon('submission_interrupted'),
            );
          return this.submit(batch, context.signal);
        }
        return this.poll(batch, context.signal);
      case 'finalizing':
        return this.poll(batch, context.signal);
      case 'completed':
      case 'failed':
      case 'expired':
      case 'cancelled':
        return DONE;
      default: {
        const never: never = batch.status;
        throw new Error(`unknown batch status ${String(never)}`);
      }
    }
  }

  private connection(batch: BatchRecord) {
    const connection = this.deps.upstreams.connections.get(batch.connection);
    if (!connection)
      throw new Error(`batch ${batch.id}: connection ${batch.connection} is no longer configured`);
    return connection;
  }

  private async submit(batch: BatchRecord, signal: AbortSignal): Promise<JobOutcome> {
    const { store, clock, objects } = this.deps;
    // Read before the batch says a submission started: an object store that is down throws here
    // and the job is retried with its backoff, instead of a retry that finds a started submission
    // and can only fail it as interrupted, charged whole, for a batch never sent.
    const stored = await objects.get(batch.projectId, payloadKey(batch.id));
    const payload = stored ? await readBuffer(stored) : undefined;
    const now = clock.now();
    const started =
      batch.status === 'validating'
        ? await store.batches.update(batch.id, ['validating'], {
            status: 'in_progress',
            inProgressAt: now,
            submitStartedAt: now,
          })
        : await store.batches.update(batch.id, [batch.status], { submitStartedAt: now });
    if (!started) return DONE;
    if (!payload)
      return this.fail(started, 'payload_missing', 'The translated batch payload is gone.', (attempt) =>
        attempt.withdraw('payload_missing'),
      );
    let submitted: Awaited<ReturnType<typeof submitBatch>>;
    try {
      submitted = await submitBatch(batch.carrier, this.connection(batch), payload, signal);
    } catch (error) {
      if (error instanceof UpstreamFailure && error.kind === 'connect') {
        // Nothing reached the upstream: submit again later.
        await store.batches.update(batch.id, ['in_progress', 'cancelling'], { submitStartedAt: null });
        return this.later;
      }
      if (error instanceof UpstreamRejected)
        return this.fail(started, 'upstream_rejected', error.message, (attempt) =>
          attempt.refused('upstream_rejected'),
        );
      const message = error instanceof Error ? error.message : String(error);
      return this.fail(
        started,
        'submission_failed',
        `${message}; the upstream may have accepted the batch.`,
        (attempt) => attempt.abandon('submission_failed'),
      );
    }
    await store.batches.update(batch.id, ['in_progress', 'cancelling'], submitted);
    await objects.delete(batch.projectId, payloadKey(batch.id)).catch(() => false);
    return this.later;
  }

  private async poll(batch: BatchRecord, signal: AbortSignal): Promise<JobOutcome> {
    const connection = this.connection(batch);
    const upstreamId = batch.upstreamBatchId!;
    let state: UpstreamState;
    try {
      if (batch.status === 'cancelling') await cancelBatch(batch.carrier, connection, upstreamId, signal);
      state = await pollBatch(batch.carrier, connection, upstreamId, signal);
    } catch (error) {
      if (error instanceof UpstreamFailure || error instanceof UpstreamRejected) return this.later;
      throw error;
    }
    if (!state.ended) return this.later;
    return this.finalize(batch, state, signal);
  }

  private async finalize(
    batch: BatchRecord,
    state: Extract<UpstreamState, { ended: true }>,
    signal: AbortSignal,
  ): Promise<JobOutcome> {
    const { store, clock, config } = this.deps;
    const finalizing =
      batch.status === 'finalizing'
        ? batch
        : await store.batches.update(batch.id, ['in_progress', 'cancelling'], {
            status: 'finalizing',
            finalizingAt: clock.now(),
            outputFileId: newId('file'),
            errorFileId: newId('file'),
          });
    if (!finalizing) return DONE;
    if (state.outcome === 'failed') {
      const code = state.errors[0]?.code ?? 'upstream_failed';
      return this.fail(
        finalizing,
        code,
        state.errors[0]?.message ?? 'The upstream failed the batch.',
        (attempt) => attempt.refused(code),
        state.errors,
      );
    }
    let read: Awaited<ReturnType<typeof readResults>>;
    try {
      read = await readResults(
        batch.carrier,
        this.connection(batch),
        state.resultFiles,
        config.limits.batch_result_ceiling_bytes,
        signal,
      );
    } catch (error) {
      if (error instanceof UpstreamFailure || error instanceof UpstreamRejected) return this.later;
      throw error;
    }
    if (read.kind === 'too_large') {
      return this.fail(
        finalizing,
        'results_undeliverable',
        `The results exceed the response ceiling of ${config.limits.batch_result_ceiling_bytes} bytes; they are not delivered (never truncated).`,
        (attempt) => attempt.abandon('results_undeliverable'),
      );
    }
    const outputs = buildOutputs(
      batch.lines,
      read.results,
      bindingFor(this.connection(batch).row),
      newIds(),
      batch.endpoint === CHAT_LINES ? CHAT_LINES : MESSAGES_LINES,
    );
    const outputFileId = await this.writeFile(
      finalizing,
      finalizing.outputFileId!,
      'output',
      outputs.outputLines,
    );
    const errorFileId = await this.writeFile(
      finalizing,
      finalizing.errorFileId!,
      'error',
      outputs.errorLines,
    );
    const now = clock.now();
    await this.deps.runner
      .held(finalizing)
      .finish({ costMicrosUsd: outputs.costMicrosUsd, usage: outputs.usage });
    const status: BatchStatus =
      finalizing.cancellingAt !== null ? 'cancelled' : state.outcome === 'expired' ? 'expired' : 'completed';
    const patch: BatchPatch = { status, outputFileId, errorFileId, requestCounts: outputs.counts };
    if (status === 'cancelled') patch.cancelledAt = now;
    else if (status === 'expired') patch.expiredAt = now;
    else patch.completedAt = now;
    await store.batches.update(batch.id, ['finalizing'], patch);
    return DONE;
  }

  /** Our service-owned file (output or error); null when it would be empty. Re-runs overwrite the same id. */
  private async writeFile(
    batch: BatchRecord,
    fileId: string,
    kind: 'output' | 'error',
    lines: string[],
  ): Promise<string | null> {
    if (lines.length === 0) return null;
    const { store, objects } = this.deps;
    const put = await objects.put(batch.projectId, fileId, Buffer.from(`${lines.join('\n')}\n`), {
      sealed: false,
    });
    if (!(await store.files.get(batch.projectId, fileId))) {
      await store.files.insert({
        id: fileId,
        projectId: batch.projectId,
        keyId: null,
        connection: batch.connection,
        filename: `${batch.id}_${kind}.jsonl`,
        purpose: kind === 'output' ? 'batch_output' : 'batch_error',
        bytes: put.bytes,
        sha256: put.sha256,
        status: 'processed',
        statusDetails: null,
        upstreamFileId: null,
        createdAt: new Date(this.deps.clock.now()).toISOString(),
        expiresAt: new Date(batch.deleteAfter).toISOString(),
      });
    }
    return fileId;
  }

  private async fail(
    batch: BatchRecord,
    code: string,
    message: string,
    /** How the batch's attempt ends (ledger/background-attempt.ts decides the charge). */
    end: BackgroundEnd,
    errors: BatchError[] = [{ code, message, param: null, line: null }],
  ): Promise<JobOutcome> {
    await end(this.deps.runner.held(batch));
    await this.deps.store.batches.update(
      batch.id,
      ['validating', 'in_progress', 'cancelling', 'finalizing'],
      {
        status: 'failed',
        failedAt: this.deps.clock.now(),
        outputFileId: null,
        errorFileId: null,
        errors,
        requestCounts: { total: batch.lines.length, completed: 0, failed: batch.lines.length },
      },
    );
    await this.deps.objects.delete(batch.projectId, payloadKey(batch.id)).catch(() => false);
    return DONE;
  }
}
