/**
 * The governance writes on PostgreSQL, each inside the caller's idempotent READ COMMITTED
 * transaction (postgres-store.ts). Decisions come from rules.ts; this file only locks and writes:
 * - the Runs-per-Work-Unit limit is one conditional UPDATE of run_count, re-checked by PostgreSQL
 *   against the committed row when it queued behind a concurrent creation;
 * - an Outcome revision locks the head row; the unique indexes outcomes_one_head and
 *   outcomes_supersedes_once turn any race that slips past (two first reports) into
 *   outcome_revision_conflict (errors.ts). Lock order: Work Unit, head, Project sequence row.
 */
import type pg from 'pg';
import { GatewayError } from '../../errors/gateway-error.js';
import type {
  CloseRunInput,
  CloseWorkUnitInput,
  CreateRunInput,
  CreateWorkUnitInput,
  Outcome,
  ReportOutcomeInput,
  Run,
  WorkUnit,
} from '../port.js';
import { metadataText, outcomeFromRow, type Row, runFromRow, workUnitFromRow } from '../rows.js';
import { nextRevision, outcomeWindowOpen, runCreationFailure } from '../rules.js';

type Client = pg.PoolClient;

/** A governance write's record and status (201 created, 200 already in that state). */
export interface Write<T> {
  record: T;
  status: 200 | 201;
}

export async function insertWorkUnit(client: Client, input: CreateWorkUnitInput): Promise<Write<WorkUnit>> {
  const unit = input.workUnit;
  await client.query(
    'INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions, metadata) VALUES ($1, $2, $3, $4, NULL, $5, $6)',
    [
      unit.id,
      unit.projectId,
      unit.status,
      unit.createdAt,
      JSON.stringify(unit.definitions),
      metadataText(unit.metadata),
    ],
  );
  return { record: unit, status: 201 };
}

export async function closeWorkUnitIn(client: Client, input: CloseWorkUnitInput): Promise<Write<WorkUnit>> {
  const unit = await workUnitRow(client, input.projectId, input.id, 'FOR UPDATE');
  if (!unit) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
  if (unit.status === 'closed') return { record: unit, status: 200 };
  // Times are taken before the row lock, so a Run created just before this close may carry a later
  // timestamp; closed_at never precedes a Run of the Work Unit, so the record reads in commit order.
  const closed = await client.query<{ closed_at: Date }>(
    `UPDATE work_units SET status = 'closed',
       closed_at = GREATEST($1::timestamptz, (SELECT MAX(created_at) FROM runs WHERE work_unit_id = $2))
     WHERE id = $2 RETURNING closed_at`,
    [input.closedAt, input.id],
  );
  const closedAt = closed.rows[0]!.closed_at.toISOString();
  return { record: { ...unit, status: 'closed' as const, closedAt }, status: 201 };
}

export async function insertRun(client: Client, input: CreateRunInput): Promise<Write<Run>> {
  const run = input.run;
  const counted = await client.query(
    `UPDATE work_units SET run_count = run_count + 1
     WHERE id = $1 AND project_id = $2 AND status = 'open' AND run_count < $3 RETURNING id`,
    [run.workUnitId, run.projectId, input.maxRunsPerWorkUnit],
  );
  if (counted.rowCount !== 1) {
    const found = await client.query<Row>('SELECT * FROM work_units WHERE id = $1 AND project_id = $2', [
      run.workUnitId,
      run.projectId,
    ]);
    const row = found.rows[0];
    const unit = row ? workUnitFromRow(row) : undefined;
    // run_count never decreases and a closed Work Unit never reopens, so a refusal has a reason.
    throw (
      runCreationFailure(unit, row ? Number(row.run_count) : 0, input.maxRunsPerWorkUnit) ??
      new Error(`run creation on ${run.workUnitId} was refused without a reason`)
    );
  }
  await client.query(
    `INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at, metadata)
     VALUES ($1, $2, $3, $4, 'active', $5, $6, $7)`,
    [
      run.id,
      run.projectId,
      run.workUnitId,
      run.budgetMicrosUsd,
      run.createdAt,
      run.expiresAt,
      metadataText(run.metadata),
    ],
  );
  return { record: run, status: 201 };
}

export async function closeRunIn(client: Client, input: CloseRunInput): Promise<Write<Run>> {
  const found = await client.query<Row>('SELECT * FROM runs WHERE id = $1 AND project_id = $2 FOR UPDATE', [
    input.id,
    input.projectId,
  ]);
  const row = found.rows[0];
  if (!row) throw new GatewayError('run_not_found', 'Run not found.');
  const run = runFromRow(row);
  if (run.status === 'closed') return { record: run, status: 200 };
  if (run.expiresAt <= input.closedAt) throw new GatewayError('run_not_active', `Run ${run.id} has expired.`);
  await client.query("UPDATE runs SET status = 'closed', closed_at = $1, close_reason = $2 WHERE id = $3", [
    input.closedAt,
    input.reason,
    input.id,
  ]);
  return {
    record: { ...run, status: 'closed' as const, closedAt: input.closedAt, closeReason: input.reason },
    status: 201,
  };
}

export async function insertOutcomeRevision(
  client: Client,
  input: ReportOutcomeInput,
): Promise<Write<Outcome>> {
  const draft = input.outcome;
  // FOR SHARE: a concurrent close waits for this report, so `provisional` matches the order.
  const unit = await workUnitRow(client, draft.projectId, draft.workUnitId, 'FOR SHARE');
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
  const head = await lockHead(client, draft.workUnitId, draft.definitionId);
  const revision = nextRevision(head, draft.supersedesOutcomeId, input.maxRevisions);
  // Taken after the head lock (lock order: head, then the Project's sequence row).
  const sequence = await client.query<{ last_sequence: string }>(
    `INSERT INTO project_sequences (project_id, last_sequence) VALUES ($1, 1)
     ON CONFLICT (project_id) DO UPDATE SET last_sequence = project_sequences.last_sequence + 1 RETURNING last_sequence`,
    [draft.projectId],
  );
  const outcome: Outcome = {
    ...draft,
    definitionVersion,
    revision,
    governanceSequence: Number(sequence.rows[0]?.last_sequence),
    provisional: unit.status === 'open',
  };
  if (head) await client.query('UPDATE outcomes SET is_head = FALSE WHERE id = $1', [head.id]);
  await insertOutcome(client, outcome);
  return { record: outcome, status: 201 };
}

export async function workUnitRow(
  client: Client,
  projectId: string,
  id: string,
  lock: 'FOR UPDATE' | 'FOR SHARE' | '',
): Promise<WorkUnit | undefined> {
  const found = await client.query<Row>(
    `SELECT * FROM work_units WHERE id = $1 AND project_id = $2 ${lock}`,
    [id, projectId],
  );
  const row = found.rows[0];
  return row ? workUnitFromRow(row) : undefined;
}

/**
 * Locks the head of a revision chain. A writer that queued behind a concurrent revision finds the
 * row no longer a head once it gets the lock; a fresh read (new snapshot at READ COMMITTED) then
 * returns the new head, so nextRevision answers the conflict with the right message.
 */
async function lockHead(
  client: Client,
  workUnitId: string,
  definitionId: string,
): Promise<Outcome | undefined> {
  const headQuery = 'SELECT * FROM outcomes WHERE work_unit_id = $1 AND definition_id = $2 AND is_head';
  const locked = await client.query<Row>(`${headQuery} FOR UPDATE`, [workUnitId, definitionId]);
  const row = locked.rows[0] ?? (await client.query<Row>(headQuery, [workUnitId, definitionId])).rows[0];
  return row ? outcomeFromRow(row) : undefined;
}

async function insertOutcome(client: Client, outcome: Outcome): Promise<void> {
  await client.query(
    `INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value, reporter_key_id,
       observed_at, ingested_at, revision, governance_sequence, provisional, evidence_ref, evidence_sha256,
       supersedes_outcome_id, is_head)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, TRUE)`,
    [
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
      outcome.provisional,
      outcome.evidenceRef,
      outcome.evidenceSha256,
      outcome.supersedesOutcomeId,
    ],
  );
}
