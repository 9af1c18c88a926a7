/** Domain records -> /svc/v1 JSON. Run status and budget_state are derived from the clock at read time. */
import type { Outcome, Run, WorkUnit, WorkUnitView } from '../store/port.js';

export type RunStatus = 'active' | 'closed' | 'expired';
export type BudgetState = 'available' | 'fully_reserved' | 'depleted';

export function runStatus(run: Run, nowMs: number): RunStatus {
  if (run.status === 'closed') return 'closed';
  return Date.parse(run.expiresAt) <= nowMs ? 'expired' : 'active';
}

export function budgetState(run: Run): BudgetState {
  if (run.committedMicrosUsd >= run.budgetMicrosUsd) return 'depleted';
  if (run.committedMicrosUsd + run.reservedMicrosUsd >= run.budgetMicrosUsd) return 'fully_reserved';
  return 'available';
}

export function workUnitBody(unit: WorkUnit) {
  return {
    id: unit.id,
    project_id: unit.projectId,
    status: unit.status,
    created_at: unit.createdAt,
    closed_at: unit.closedAt,
    outcome_definitions: unit.definitions.map((definition) => ({
      id: definition.id,
      version: definition.version,
    })),
    metadata: unit.metadata ?? null,
  };
}

/** `pendingMicrosUsd`: reservations this process has taken that are not yet durable (normally 0). */
export function runBody(run: Run, nowMs: number, pendingMicrosUsd = 0) {
  return {
    id: run.id,
    work_unit_id: run.workUnitId,
    budget_micros_usd: run.budgetMicrosUsd,
    committed_micros_usd: run.committedMicrosUsd,
    reserved_micros_usd: run.reservedMicrosUsd,
    remaining_micros_usd: Math.max(
      0,
      run.budgetMicrosUsd - run.committedMicrosUsd - run.reservedMicrosUsd - pendingMicrosUsd,
    ),
    unknown_attempts: run.unknownAttempts,
    budget_state: budgetState(run),
    status: runStatus(run, nowMs),
    created_at: run.createdAt,
    expires_at: run.expiresAt,
    closed_at: run.closedAt,
    close_reason: run.closeReason,
    metadata: run.metadata ?? null,
  };
}

export function outcomeBody(outcome: Outcome) {
  return {
    id: outcome.id,
    work_unit_id: outcome.workUnitId,
    definition_id: outcome.definitionId,
    definition_version: outcome.definitionVersion,
    value: outcome.value,
    reporter_key_id: outcome.reporterKeyId,
    observed_at: outcome.observedAt,
    ingested_at: outcome.ingestedAt,
    revision: outcome.revision,
    governance_sequence: outcome.governanceSequence,
    provisional: outcome.provisional,
    evidence_ref: outcome.evidenceRef,
    evidence_sha256: outcome.evidenceSha256,
    supersedes_outcome_id: outcome.supersedesOutcomeId,
  };
}

export function workUnitViewBody(view: WorkUnitView, nowMs: number, pendingFor: (runId: string) => number) {
  return {
    work_unit: workUnitBody(view.workUnit),
    runs: view.runs.map((run) => runBody(run, nowMs, pendingFor(run.id))),
    outcomes: view.outcomes.map(outcomeBody),
  };
}
