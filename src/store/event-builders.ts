/**
 * The events the store writes next to the changes that cause them (docs/events.md lists each type,
 * when it fires and its data): one builder per type, so both adapters write the same envelope and
 * the same data fields. Data keys are snake_case (they reach receivers as JSON); money is integer
 * micro-USD. A dedupe key is set wherever the same event could otherwise be written twice (a sweep
 * on two replicas, a state reached by two writers): the events table keeps only the first.
 */

import { newId } from '../lib/ids.js';
import type { BatchRecord, BatchStatus } from './batches-port.js';
import type { DeferredResponseRecord, DeferredStatus } from './deferred-responses-port.js';
import { FINISHED_STATUSES } from './deferred-responses-port.js';
import type { KeyRecord, NewEvent, Outcome, Run, WorkUnit } from './records.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function keyRevokedEvent(
  key: Pick<KeyRecord, 'id' | 'projectId' | 'label'>,
  revokedAt: string,
): NewEvent {
  return {
    id: newId('evt'),
    projectId: key.projectId,
    type: 'key.revoked',
    resourceType: 'key',
    resourceId: key.id,
    occurredAt: revokedAt,
    data: { key_id: key.id, label: key.label, revoked_at: revokedAt },
    dedupeKey: `key.revoked:${key.id}`,
  };
}

export function keyExpiredEvent(
  key: { id: string; projectId: string; label: string | null; expiresAt: string },
  observedAt: string,
): NewEvent {
  return {
    id: newId('evt'),
    projectId: key.projectId,
    type: 'key.expired',
    resourceType: 'key',
    resourceId: key.id,
    occurredAt: key.expiresAt,
    data: { key_id: key.id, label: key.label, expires_at: key.expiresAt, observed_at: observedAt },
    dedupeKey: `key.expired:${key.id}`,
  };
}

export function outcomeReportedEvent(outcome: Outcome): NewEvent {
  return {
    id: newId('evt'),
    projectId: outcome.projectId,
    type: 'outcome.reported',
    resourceType: 'work_unit',
    resourceId: outcome.workUnitId,
    occurredAt: outcome.ingestedAt,
    data: {
      outcome_id: outcome.id,
      work_unit_id: outcome.workUnitId,
      definition_id: outcome.definitionId,
      definition_version: outcome.definitionVersion,
      value: outcome.value,
      revision: outcome.revision,
      provisional: outcome.provisional,
      supersedes_outcome_id: outcome.supersedesOutcomeId,
      observed_at: outcome.observedAt,
    },
  };
}

/** What a Work Unit's Runs add up to when it closes. */
export interface WorkUnitFigures {
  runs: number;
  committedMicrosUsd: number;
  reservedMicrosUsd: number;
  unknownAttempts: number;
}

export function workUnitClosedEvent(unit: WorkUnit, closedAt: string, figures: WorkUnitFigures): NewEvent {
  return {
    id: newId('evt'),
    projectId: unit.projectId,
    type: 'work_unit.closed',
    resourceType: 'work_unit',
    resourceId: unit.id,
    occurredAt: closedAt,
    data: {
      work_unit_id: unit.id,
      closed_at: closedAt,
      runs: figures.runs,
      committed_micros_usd: figures.committedMicrosUsd,
      reserved_micros_usd: figures.reservedMicrosUsd,
      unknown_attempts: figures.unknownAttempts,
    },
    dedupeKey: `work_unit.closed:${unit.id}`,
  };
}

/** The sum of a Work Unit's Runs, from the row of `SUM(...)` both adapters select. */
export function workUnitFiguresFromRow(row: Record<string, unknown> | undefined): WorkUnitFigures {
  return {
    runs: Number(row?.runs ?? 0),
    committedMicrosUsd: Number(row?.committed ?? 0),
    reservedMicrosUsd: Number(row?.reserved ?? 0),
    unknownAttempts: Number(row?.unknown_attempts ?? 0),
  };
}

export const WORK_UNIT_FIGURES_SQL = (placeholder: string) =>
  `SELECT COUNT(*) AS runs, COALESCE(SUM(committed), 0) AS committed, COALESCE(SUM(reserved), 0) AS reserved,
     COALESCE(SUM(unknown_attempts), 0) AS unknown_attempts FROM runs WHERE work_unit_id = ${placeholder}`;

export function runExpiredEvent(run: Run, observedAt: string): NewEvent {
  return {
    id: newId('evt'),
    projectId: run.projectId,
    type: 'run.expired',
    resourceType: 'run',
    resourceId: run.id,
    occurredAt: run.expiresAt,
    data: {
      run_id: run.id,
      work_unit_id: run.workUnitId,
      expires_at: run.expiresAt,
      observed_at: observedAt,
      budget: run.budgetMicrosUsd,
      committed: run.committedMicrosUsd,
      reserved: run.reservedMicrosUsd,
      unknown_attempts: run.unknownAttempts,
      had_unknown_attempts: run.unknownAttempts > 0,
    },
    dedupeKey: `run.expired:${run.id}`,
  };
}

const BATCH_FINISHED: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];

/** batch.finished when this update moved the batch into a final status, else undefined. */
export function batchFinishedEvent(
  before: BatchStatus,
  after: BatchRecord,
  nowMs: number,
): NewEvent | undefined {
  if (BATCH_FINISHED.includes(before) || !BATCH_FINISHED.includes(after.status)) return undefined;
  return {
    id: newId('evt'),
    projectId: after.projectId,
    type: 'batch.finished',
    resourceType: 'batch',
    resourceId: after.id,
    occurredAt: iso(nowMs),
    data: {
      batch_id: after.id,
      status: after.status,
      run_id: after.runId,
      request_counts: { ...after.requestCounts },
      output_file_id: after.outputFileId,
      error_file_id: after.errorFileId,
    },
    dedupeKey: `batch.finished:${after.id}`,
  };
}

/** response.finished when this update moved the deferred response into a final status, else undefined. */
export function responseFinishedEvent(
  before: DeferredStatus,
  after: DeferredResponseRecord,
  nowMs: number,
): NewEvent | undefined {
  if (FINISHED_STATUSES.includes(before) || !FINISHED_STATUSES.includes(after.status)) return undefined;
  return {
    id: newId('evt'),
    projectId: after.projectId,
    type: 'response.finished',
    resourceType: 'response',
    resourceId: after.id,
    occurredAt: iso(after.completedAt ?? nowMs),
    data: {
      response_id: after.id,
      status: after.status,
      run_id: after.runId,
      model: after.model,
      error_code: after.error?.code ?? null,
      input_tokens: after.usage?.input_tokens ?? null,
      output_tokens: after.usage?.output_tokens ?? null,
    },
    dedupeKey: `response.finished:${after.id}`,
  };
}

// ---- money path (written in the ledger's own transactions) ---------------------------------------

/** The Run's figures after the change that crossed `threshold`. */
export interface RunFigures {
  runId: string;
  projectId: string;
  workUnitId: string;
  budget: number;
  committed: number;
  reserved: number;
}

export function runThresholdEvent(run: RunFigures, threshold: number, occurredAt: string): NewEvent {
  return {
    id: newId('evt'),
    projectId: run.projectId,
    type: 'run.budget_threshold',
    resourceType: 'run',
    resourceId: run.runId,
    occurredAt,
    data: {
      run_id: run.runId,
      work_unit_id: run.workUnitId,
      threshold,
      budget: run.budget,
      committed: run.committed,
      reserved: run.reserved,
    },
    dedupeKey: `run.budget_threshold:${run.runId}:lifetime:${threshold}`,
  };
}

/** run.depleted: the first reservation the Run's remaining budget refused (once per Run). */
export function runDepletedEvent(run: RunFigures, refusedMicrosUsd: number, occurredAt: string): NewEvent {
  return {
    id: newId('evt'),
    projectId: run.projectId,
    type: 'run.depleted',
    resourceType: 'run',
    resourceId: run.runId,
    occurredAt,
    data: {
      run_id: run.runId,
      work_unit_id: run.workUnitId,
      budget: run.budget,
      committed: run.committed,
      reserved: run.reserved,
      remaining: Math.max(0, run.budget - run.committed - run.reserved),
      refused_reservation: refusedMicrosUsd,
    },
    dedupeKey: `run.depleted:${run.runId}`,
  };
}

/** A cap counter's figures after the reservation that crossed `threshold`. */
export interface CapFigures {
  scope: 'project' | 'key';
  ownerId: string;
  /** The owner's Project (a key's Project, or the Project itself). */
  projectId: string;
  period: string;
  cap: number;
  committed: number;
  reserved: number;
}

export function capThresholdEvent(
  figures: CapFigures,
  window: string,
  threshold: number,
  occurredAt: string,
): NewEvent {
  const type = figures.scope === 'key' ? 'key.cap_threshold' : 'project.cap_threshold';
  return {
    id: newId('evt'),
    projectId: figures.projectId,
    type,
    resourceType: figures.scope,
    resourceId: figures.ownerId,
    occurredAt,
    data: {
      [figures.scope === 'key' ? 'key_id' : 'project_id']: figures.ownerId,
      window,
      threshold,
      cap: figures.cap,
      committed: figures.committed,
      reserved: figures.reserved,
    },
    dedupeKey: `${type}:${figures.ownerId}:${window}:${threshold}`,
  };
}

/** An attempt as the settlement that found its cost unknowable left it. */
export interface UnknownAttempt {
  attemptId: string;
  projectId: string;
  keyId: string;
  runId: string | null;
  endpoint: string;
  alias: string;
  connection: string;
  outcome: string;
  committedMicrosUsd: number;
  settledAt: string;
}

export function attemptUnknownEvent(attempt: UnknownAttempt): NewEvent {
  return {
    id: newId('evt'),
    projectId: attempt.projectId,
    type: 'attempt.unknown',
    resourceType: 'attempt',
    resourceId: attempt.attemptId,
    occurredAt: attempt.settledAt,
    data: {
      attempt_id: attempt.attemptId,
      run_id: attempt.runId,
      key_id: attempt.keyId,
      endpoint: attempt.endpoint,
      alias: attempt.alias,
      connection: attempt.connection,
      outcome: attempt.outcome,
      committed: attempt.committedMicrosUsd,
    },
    dedupeKey: `attempt.unknown:${attempt.attemptId}`,
  };
}

/** attempt.unknown from an attempt row (both adapters' column names) and its settlement. */
export function attemptUnknownFromRow(
  attempt: Record<string, unknown>,
  attemptId: string,
  outcome: string,
  committedMicrosUsd: number,
  settledAt: string,
): NewEvent {
  return attemptUnknownEvent({
    attemptId,
    projectId: String(attempt.project_id),
    keyId: String(attempt.key_id),
    runId: attempt.run_id === null || attempt.run_id === undefined ? null : String(attempt.run_id),
    endpoint: String(attempt.endpoint),
    alias: String(attempt.alias),
    connection: String(attempt.connection),
    outcome,
    committedMicrosUsd,
    settledAt,
  });
}
