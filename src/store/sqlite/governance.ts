/**
 * The governance records on SQLite: outcome definitions, Work Units, Runs and Outcomes. The writes
 * run inside the caller's idempotent transaction (idempotency.ts), the reads inside its read; one
 * writer, so reading, deciding (rules.ts) and writing in one transaction is exact here.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type {
  CloseRunInput,
  CloseWorkUnitInput,
  CreateRunInput,
  CreateWorkUnitInput,
  Outcome,
  OutcomeDefinition,
  ReportOutcomeInput,
  Run,
  WorkUnit,
  WorkUnitView,
} from '../port.js';
import { metadataText, outcomeFromRow, type Row, runFromRow, workUnitFromRow } from '../rows.js';
import { nextRevision, outcomeWindowOpen, runCreationFailure } from '../rules.js';
import type { Sql } from './transaction.js';

/** A governance write's record and status (201 created, 200 already in that state). */
export interface Write<T> {
  record: T;
  status: 200 | 201;
}

// ---- outcome definitions -------------------------------------------------------------------

export function syncDefinitionsIn(sql: Sql, definitions: OutcomeDefinition[]): void {
  for (const definition of definitions) {
    sql(
      `INSERT INTO outcome_definitions (project_id, id, version, kind, allowed_values, enabled) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, id, version) DO UPDATE SET enabled = excluded.enabled`,
    ).run(
      definition.projectId,
      definition.id,
      definition.version,
      definition.kind,
      JSON.stringify(definition.allowedValues),
      definition.enabled ? 1 : 0,
    );
  }
}

export function listDefinitionsIn(sql: Sql, projectId: string): OutcomeDefinition[] {
  const rows = sql('SELECT * FROM outcome_definitions WHERE project_id = ? ORDER BY id, version').all(
    projectId,
  ) as Row[];
  return rows.map((row) => ({
    projectId: String(row.project_id),
    id: String(row.id),
    version: Number(row.version),
    kind: row.kind as OutcomeDefinition['kind'],
    allowedValues: JSON.parse(String(row.allowed_values)) as Array<string | boolean>,
    enabled: Number(row.enabled) === 1,
  }));
}

// ---- writes ----------------------------------------------------------------------------------

export function insertWorkUnit(sql: Sql, input: CreateWorkUnitInput): Write<WorkUnit> {
  const unit = input.workUnit;
  sql(
    'INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions, metadata) VALUES (?, ?, ?, ?, NULL, ?, ?)',
  ).run(
    unit.id,
    unit.projectId,
    unit.status,
    unit.createdAt,
    JSON.stringify(unit.definitions),
    metadataText(unit.metadata),
  );
  return { record: unit, status: 201 };
}

export function closeWorkUnitIn(sql: Sql, input: CloseWorkUnitInput): Write<WorkUnit> {
  const unit = workUnitRow(sql, input.projectId, input.id);
  if (!unit) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
  if (unit.status === 'closed') return { record: unit, status: 200 };
  sql("UPDATE work_units SET status = 'closed', closed_at = ? WHERE id = ?").run(input.closedAt, input.id);
  return { record: { ...unit, status: 'closed' as const, closedAt: input.closedAt }, status: 201 };
}

export function insertRun(sql: Sql, input: CreateRunInput): Write<Run> {
  const run = input.run;
  const unitRow = sql('SELECT * FROM work_units WHERE id = ? AND project_id = ?').get(
    run.workUnitId,
    run.projectId,
  ) as Row | undefined;
  const failure = runCreationFailure(
    unitRow ? workUnitFromRow(unitRow) : undefined,
    unitRow ? Number(unitRow.run_count) : 0,
    input.maxRunsPerWorkUnit,
  );
  if (failure) throw failure;
  sql('UPDATE work_units SET run_count = run_count + 1 WHERE id = ?').run(run.workUnitId);
  sql(
    `INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at, metadata)
     VALUES (?, ?, ?, ?, 'active', ?, ?, ?)`,
  ).run(
    run.id,
    run.projectId,
    run.workUnitId,
    run.budgetMicrosUsd,
    run.createdAt,
    run.expiresAt,
    metadataText(run.metadata),
  );
  return { record: run, status: 201 };
}

export function closeRunIn(sql: Sql, input: CloseRunInput): Write<Run> {
  const row = runRow(sql, input.projectId, input.id);
  if (!row) throw new GatewayError('run_not_found', 'Run not found.');
  const run = runFromRow(row);
  if (run.status === 'closed') return { record: run, status: 200 };
  if (run.expiresAt <= input.closedAt) throw new GatewayError('run_not_active', `Run ${run.id} has expired.`);
  sql("UPDATE runs SET status = 'closed', closed_at = ?, close_reason = ? WHERE id = ?").run(
    input.closedAt,
    input.reason,
    input.id,
  );
  return {
    record: { ...run, status: 'closed' as const, closedAt: input.closedAt, closeReason: input.reason },
    status: 201,
  };
}

export function insertOutcomeRevision(sql: Sql, input: ReportOutcomeInput): Write<Outcome> {
  const draft = input.outcome;
  const unit = workUnitRow(sql, draft.projectId, draft.workUnitId);
  if (!unit) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
  const definitionVersion = input.checkDefinition(
    unit.definitions.find((definition) => definition.id === draft.definitionId),
  );
  if (!outcomeWindowOpen(unit, Date.parse(draft.ingestedAt), input.writeWindowMs)) {
    throw new GatewayError(
      'outcome_write_closed',
      'The Outcome write window (30 days after the Work Unit closed) has passed.',
    );
  }
  const headRow = sql(
    'SELECT * FROM outcomes WHERE work_unit_id = ? AND definition_id = ? AND is_head = 1',
  ).get(draft.workUnitId, draft.definitionId) as Row | undefined;
  const head = headRow ? outcomeFromRow(headRow) : undefined;
  const revision = nextRevision(head, draft.supersedesOutcomeId, input.maxRevisions);
  const sequenceRow = sql(
    `INSERT INTO project_sequences (project_id, last_sequence) VALUES (?, 1)
     ON CONFLICT (project_id) DO UPDATE SET last_sequence = last_sequence + 1 RETURNING last_sequence`,
  ).get(draft.projectId) as Row;
  const outcome: Outcome = {
    ...draft,
    definitionVersion,
    revision,
    governanceSequence: Number(sequenceRow.last_sequence),
    provisional: unit.status === 'open',
  };
  if (head) sql('UPDATE outcomes SET is_head = 0 WHERE id = ?').run(head.id);
  sql(
    `INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value, reporter_key_id,
       observed_at, ingested_at, revision, governance_sequence, provisional, evidence_ref, evidence_sha256,
       supersedes_outcome_id, is_head)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
  ).run(
    outcome.id,
    outcome.projectId,
    outcome.workUnitId,
    outcome.definitionId,
    outcome.definitionVersion,
    JSON.stringify(outcome.value),
    outcome.reporterKeyId,
    outcome.observedAt,
    outcome.ingestedAt,
    outcome.revision,
    outcome.governanceSequence,
    outcome.provisional ? 1 : 0,
    outcome.evidenceRef,
    outcome.evidenceSha256,
    outcome.supersedesOutcomeId,
  );
  return { record: outcome, status: 201 };
}

// ---- reads -----------------------------------------------------------------------------------

export function workUnitRow(sql: Sql, projectId: string, id: string): WorkUnit | undefined {
  const row = sql('SELECT * FROM work_units WHERE id = ? AND project_id = ?').get(id, projectId) as
    | Row
    | undefined;
  return row ? workUnitFromRow(row) : undefined;
}

/** A Run's row in its Project (the ledger reads it too, to say why a reservation was refused). */
export function runRow(sql: Sql, projectId: string, id: string): Row | undefined {
  return sql('SELECT * FROM runs WHERE id = ? AND project_id = ?').get(id, projectId) as Row | undefined;
}

export function workUnitView(sql: Sql, projectId: string, id: string): WorkUnitView | undefined {
  const workUnit = workUnitRow(sql, projectId, id);
  if (!workUnit) return undefined;
  const runs = (
    sql('SELECT * FROM runs WHERE work_unit_id = ? ORDER BY created_at, id').all(id) as Row[]
  ).map(runFromRow);
  const outcomes = (
    sql('SELECT * FROM outcomes WHERE work_unit_id = ? ORDER BY governance_sequence').all(id) as Row[]
  ).map(outcomeFromRow);
  return { workUnit, runs, outcomes };
}
