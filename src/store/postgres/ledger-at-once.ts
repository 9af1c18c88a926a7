/**
 * The ledger's common case on PostgreSQL, one autocommit statement per group-commit batch.
 *
 * ledger-batch.ts writes a batch in a transaction of five statements, and the hot Run's row lock is
 * held from the second to the commit: across three round trips, each of which waits for the
 * gateway's event loop to come round. Under load the reservation and the settlement batches of one
 * Run spend most of their time waiting for that lock, one for the other. Here the whole batch is one
 * statement, so the lock is held only while the database runs and commits it.
 *
 * - reserveAtOnce admits a whole batch when it can: at most one Run (and one project on it), no
 *   spend cap on any of its calls, and room on the Run for all of it. The Run's UPDATE is the
 *   conditional one of ledger.ts (re-checked against the latest row version under its lock), and
 *   the attempts are inserted only if it applied, so either every call is admitted or nothing is
 *   written. When nothing is written the batch goes to ledger-batch.ts, which decides call by call
 *   in arrival order and says why each refused call was refused.
 * - settleAtOnce settles every attempt of the batch that is still reserved and was admitted on no
 *   cap counter: the attempts, then their Runs' totals (locked in id order, after the attempts, as
 *   everywhere), then the audit entries in the batch's order. It returns the ids it settled; the
 *   others (settled already, unknown, or holding cap counters) go to ledger-batch.ts, for which a
 *   settled attempt is a no-op.
 */
import { reservationCounters } from '../../ledger/spend-caps.js';
import { isoTime } from '../../lib/clock.js';
import type { ReserveInput, SettleInput } from '../port.js';
import type { Row } from '../rows.js';
import { settlementAmountsSql } from '../rules.js';
import { ATTEMPT_COLUMNS, AUDIT_COLUMNS, attemptColumns } from './ledger-columns.js';

/** One statement outside an explicit transaction (the caller's pool, gate and error mapping). */
export type Query = (text: string, values: unknown[]) => Promise<{ rowCount: number | null; rows: Row[] }>;

/** The Run and project a batch reserves on, or undefined when the batch needs ledger-batch.ts. */
function singleRun(
  inputs: readonly ReserveInput[],
): { runId: string | null; projectId: string | null } | undefined {
  let runId: string | null = null;
  let projectId: string | null = null;
  for (const input of inputs) {
    if (reservationCounters(input.projectId, input.projectCaps, input.keyId, undefined, input.now).length > 0)
      return undefined;
    if (input.runId === null) continue;
    if (runId === null) {
      runId = input.runId;
      projectId = input.projectId;
    } else if (input.runId !== runId || input.projectId !== projectId) return undefined;
  }
  return { runId, projectId };
}

/** Admits every call of the batch in one statement, or writes nothing and returns false. */
export async function reserveAtOnce(query: Query, inputs: ReserveInput[]): Promise<boolean> {
  const target = singleRun(inputs);
  if (!target) return false;
  let amount = 0;
  let latest = 0;
  for (const input of inputs) {
    if (input.runId !== null) amount += input.reservationMicrosUsd;
    latest = Math.max(latest, input.now);
  }
  const result = await query(
    // A key whose limits name any cap leaves the batch to ledger-batch.ts, which reads them (a
    // managed key without caps stores '{}'). The Run must outlive the latest `now` of the batch, so
    // it outlives each call's.
    `WITH capped AS (
       SELECT 1 FROM gateway_keys WHERE id = ANY($14::text[]) AND limits IS NOT NULL AND limits <> '{}'::jsonb
     ), reserved AS (
       UPDATE runs SET reserved = reserved + $15
       WHERE id = $16 AND project_id = $17 AND status = 'active' AND expires_at > $18
         AND committed + reserved + $15 <= budget AND NOT EXISTS (SELECT 1 FROM capped)
       RETURNING id
     )
     INSERT INTO attempts (${ATTEMPT_COLUMNS})
     SELECT id, project_id, key_id, run_id, 'reserved', reservation, lease_expires_at, owner, endpoint, alias,
       connection, profile, upstream_model, created_at, NULL
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::text[],
       $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])
       AS d(id, project_id, key_id, run_id, reservation, lease_expires_at, owner, endpoint, alias, connection,
         profile, upstream_model, created_at)
     WHERE NOT EXISTS (SELECT 1 FROM capped) AND ($16::text IS NULL OR EXISTS (SELECT 1 FROM reserved))`,
    [
      ...attemptColumns(inputs),
      [...new Set(inputs.map((input) => input.keyId))],
      amount,
      target.runId,
      target.projectId,
      isoTime(latest),
    ],
  );
  return result.rowCount === inputs.length;
}

const AMOUNTS = settlementAmountsSql('d.state', 'a.reservation', 'd.cost');

/**
 * Settles the batch's uncapped, still-reserved attempts in one statement; returns their ids. An
 * attempt named twice is settled by its first settlement, as in ledger-batch.ts; the repeat is
 * left to it (a no-op there).
 */
export async function settleAtOnce(query: Query, inputs: SettleInput[]): Promise<Set<string>> {
  const named = new Set<string>();
  const first = inputs.filter((input) => !named.has(input.attemptId) && named.add(input.attemptId));
  const column = <T>(read: (input: SettleInput) => T) => first.map(read);
  const result = await query(
    `WITH d AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::text[], $6::bigint[],
         $7::bigint[], $8::bigint[], $9::bigint[], $10::int[], $11::bigint[])
         WITH ORDINALITY AS d(id, state, cost, settled_at, outcome, input_tokens, output_tokens,
           cache_creation_input_tokens, cache_read_input_tokens, http_status, duration_ms, position)
     ), locked AS MATERIALIZED (
       SELECT id, state = 'reserved' AND cap_counters IS NULL AS open
       FROM attempts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE
     ), settled AS (
       UPDATE attempts a SET state = d.state, cost = ${AMOUNTS.commit}, settled_at = d.settled_at, outcome = d.outcome
       FROM d JOIN locked ON locked.id = d.id WHERE a.id = locked.id AND locked.open
       RETURNING a.id, a.project_id, a.key_id, a.run_id, a.endpoint, a.alias, a.connection, a.profile,
         a.upstream_model, a.state, a.reservation, a.cost, a.created_at, a.settled_at, a.outcome, d.position,
         d.input_tokens, d.output_tokens, d.cache_creation_input_tokens, d.cache_read_input_tokens,
         d.http_status, d.duration_ms, ${AMOUNTS.overrun} AS overrun, ${AMOUNTS.unknown} AS unknown
     ), locked_runs AS (
       SELECT id FROM runs WHERE id IN (SELECT run_id FROM settled) ORDER BY id FOR UPDATE
     ), runs_settled AS (
       UPDATE runs SET reserved = runs.reserved - s.reserved, committed = runs.committed + s.commit,
         overrun = runs.overrun + s.overrun, unknown_attempts = runs.unknown_attempts + s.unknown
       FROM (SELECT run_id, sum(reservation) AS reserved, sum(cost) AS commit, sum(overrun) AS overrun,
               sum(unknown) AS unknown
             FROM settled WHERE run_id IS NOT NULL GROUP BY run_id) s
       WHERE runs.id = s.run_id AND runs.id IN (SELECT id FROM locked_runs)
     )
     INSERT INTO audit (${AUDIT_COLUMNS})
     SELECT id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation,
       cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status,
       duration_ms, overrun > 0, created_at, settled_at
     FROM settled ORDER BY position
     RETURNING attempt_id`,
    [
      column((input) => input.attemptId),
      column((input) => input.state),
      column((input) => input.costMicrosUsd),
      column((input) => input.settledAt),
      column((input) => input.outcome),
      column((input) => input.usage?.inputTokens ?? null),
      column((input) => input.usage?.outputTokens ?? null),
      column((input) => input.usage?.cacheCreationInputTokens ?? null),
      column((input) => input.usage?.cacheReadInputTokens ?? null),
      column((input) => input.httpStatus),
      column((input) => Math.round(input.durationMs)),
    ],
  );
  return new Set(result.rows.map((row) => String(row.attempt_id)));
}
