/**
 * The ledger on PostgreSQL; each function runs inside the caller's READ COMMITTED transaction.
 *
 * - Admission is ONE conditional UPDATE on the Run row. Concurrent admissions queue on the row
 *   lock and PostgreSQL re-evaluates the WHERE clause against the committed row (EvalPlanQual), so
 *   the sum of admitted reservations never exceeds the budget, across any number of replicas. The
 *   CHECK runs_within_budget backs it up. Only a refused admission reads the Run, to say why.
 * - Settlement locks the attempt row first (FOR UPDATE), so a settle racing the reaper or a
 *   retry applies once; then it updates the Run and appends the audit entry.
 * - Reaping claims expired attempts with FOR UPDATE SKIP LOCKED, so replicas reap concurrently
 *   without double-settling; claimed rows are settled in run_id order, so two reapers lock Runs in
 *   the same order and cannot deadlock.
 * - Spend caps (caps.ts): after the Run, the counters are locked (FOR UPDATE, counterOrder) and the
 *   reservation admitted only if it fits every one; a refusal rolls the whole reservation back.
 *   Settlement (and the reaper, after all its Runs) releases/commits them last.
 * - Reservations in doubt (releaseInDoubtIn): tombstones for the absent ids first (INSERT ... ON
 *   CONFLICT DO NOTHING waits for a reservation of the same id still being written, so either the
 *   tombstone or the reservation wins, never both), then the reserved ones are settled as not_sent
 *   by ledger-batch.ts's settleBatch (its lock order).
 * Lock order everywhere: attempt, then Run, then spend counters (counterOrder).
 */
import type pg from 'pg';
import { isoTime } from '../../lib/clock.js';
import { type CounterKey, counterKeys, recordedCounters } from '../../money/spend-caps.js';
import { counterSettlements } from '../cap-tally.js';
import type { ReapedAttempt, ReserveInput, SettledAttempt, SettleInput } from '../port.js';
import { type Row, runFromRow, settledAttemptFromRow } from '../rows.js';
import { reserveFailure, settlementAmounts } from '../rules.js';
import { addReservationsIn, prepareCapsIn, settleCountersIn } from './caps.js';
import { settleBatch } from './ledger-batch.js';
import { ATTEMPT_COLUMNS, AUDIT_COLUMNS, attemptColumns } from './ledger-columns.js';

export async function reserveIn(client: pg.PoolClient, input: ReserveInput): Promise<void> {
  if (input.runId !== null) {
    const nowIso = isoTime(input.now);
    const admitted = await client.query(
      `UPDATE runs SET reserved = reserved + $1
       WHERE id = $2 AND project_id = $3 AND status = 'active' AND expires_at > $4 AND committed + reserved + $1 <= budget
       RETURNING id`,
      [input.reservationMicrosUsd, input.runId, input.projectId, nowIso],
    );
    if (admitted.rowCount !== 1) {
      const found = await client.query<Row>('SELECT * FROM runs WHERE id = $1 AND project_id = $2', [
        input.runId,
        input.projectId,
      ]);
      const row = found.rows[0];
      throw reserveFailure(row ? runFromRow(row) : undefined, nowIso, input.reservationMicrosUsd);
    }
  }
  const {
    tally,
    counters: [counters = []],
  } = await prepareCapsIn(client, [input]);
  const refusal = tally.refusal(counters, input.reservationMicrosUsd);
  if (refusal) throw refusal; // rolls the Run's reservation back with the transaction
  tally.take(counters, input.reservationMicrosUsd);
  await addReservationsIn(client, tally.reservations());
  await client.query(
    `INSERT INTO attempts (${ATTEMPT_COLUMNS})
     VALUES ($1, $2, $3, $4, 'reserved', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      input.attemptId,
      input.projectId,
      input.keyId,
      input.runId,
      input.reservationMicrosUsd,
      input.leaseExpiresAt,
      input.owner,
      input.endpoint,
      input.alias,
      input.connection,
      input.profile,
      input.upstreamModel,
      input.createdAt,
      counters.length === 0 ? null : JSON.stringify(counterKeys(counters)),
    ],
  );
}

/** What a settlement does to the spend counters the attempt was admitted on. */
interface CapSettlement {
  counters: CounterKey[];
  reservation: number;
  commit: number;
}

/**
 * Settles an attempt whose row this transaction has locked (state 'reserved'); returns what its
 * spend counters need, which the caller applies after the Run (settleIn) or after every Run (reapIn).
 */
async function settleLocked(client: pg.PoolClient, attempt: Row, input: SettleInput): Promise<CapSettlement> {
  const reservation = Number(attempt.reservation);
  const amounts = settlementAmounts(input.state, reservation, input.costMicrosUsd);
  if (attempt.run_id !== null) {
    await client.query(
      `UPDATE runs SET reserved = reserved - $1, committed = committed + $2, overrun = overrun + $3,
         unknown_attempts = unknown_attempts + $4 WHERE id = $5`,
      [reservation, amounts.commit, amounts.overrun, amounts.unknown, attempt.run_id],
    );
  }
  await client.query(
    'UPDATE attempts SET state = $1, cost = $2, settled_at = $3, outcome = $5 WHERE id = $4',
    [input.state, amounts.commit, input.settledAt, input.attemptId, input.outcome],
  );
  await client.query(
    `INSERT INTO audit (${AUDIT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
    [
      input.attemptId,
      attempt.project_id,
      attempt.key_id,
      attempt.run_id,
      attempt.endpoint,
      attempt.alias,
      attempt.connection,
      attempt.profile,
      attempt.upstream_model,
      input.state,
      reservation,
      amounts.commit,
      input.usage?.inputTokens ?? null,
      input.usage?.outputTokens ?? null,
      input.usage?.cacheCreationInputTokens ?? null,
      input.usage?.cacheReadInputTokens ?? null,
      input.outcome,
      input.httpStatus,
      Math.round(input.durationMs),
      amounts.overrun > 0,
      attempt.created_at,
      input.settledAt,
    ],
  );
  return { counters: recordedCounters(attempt.cap_counters), reservation, commit: amounts.commit };
}

/**
 * Idempotent: an attempt already settled (or unknown) is left alone (undefined). Otherwise the
 * attempt as this settlement left it.
 */
export async function settleIn(
  client: pg.PoolClient,
  input: SettleInput,
): Promise<SettledAttempt | undefined> {
  const found = await client.query<Row>('SELECT * FROM attempts WHERE id = $1 FOR UPDATE', [input.attemptId]);
  const attempt = found.rows[0];
  if (attempt?.state !== 'reserved') return undefined;
  const caps = await settleLocked(client, attempt, input);
  await settleCountersIn(client, counterSettlements([caps]));
  return settledAttemptFromRow(attempt, caps.commit);
}

export async function renewLeaseIn(
  client: pg.PoolClient,
  attemptId: string,
  leaseExpiresAt: string,
): Promise<void> {
  await client.query("UPDATE attempts SET lease_expires_at = $1 WHERE id = $2 AND state = 'reserved'", [
    leaseExpiresAt,
    attemptId,
  ]);
}

/** Commits the full reservation of every claimable orphan; returns each as its settlement left it. */
export async function reapIn(
  client: pg.PoolClient,
  nowIso: string,
  liveOwner?: string,
): Promise<ReapedAttempt[]> {
  const orphanFilter =
    liveOwner === undefined
      ? 'lease_expires_at <= $1'
      : // Attempts owned by a durable job ('job:...') survive the process; only their lease reaps them.
        "(lease_expires_at <= $1 OR (owner <> $2 AND owner NOT LIKE 'job:%'))";
  const claimed = await client.query<Row>(
    `SELECT * FROM attempts WHERE state = 'reserved' AND ${orphanFilter}
     ORDER BY run_id NULLS FIRST, id FOR UPDATE SKIP LOCKED`,
    liveOwner === undefined ? [nowIso] : [nowIso, liveOwner],
  );
  const nowMs = Date.parse(nowIso);
  const caps: CapSettlement[] = [];
  const reaped: ReapedAttempt[] = [];
  for (const attempt of claimed.rows) {
    const createdMs = new Date(attempt.created_at as Date | string).getTime();
    const durationMs = Math.max(0, nowMs - createdMs);
    const settlement = await settleLocked(client, attempt, {
      attemptId: String(attempt.id),
      state: 'unknown',
      costMicrosUsd: 0,
      usage: null,
      outcome: 'lease_expired',
      httpStatus: null,
      durationMs,
      settledAt: nowIso,
    });
    caps.push(settlement);
    reaped.push({
      ...settledAttemptFromRow(attempt, settlement.commit),
      attemptId: String(attempt.id),
      durationMs,
    });
  }
  // Counters after every Run, so the reaper (which holds several Runs) never waits for a Run while
  // holding a counter.
  await settleCountersIn(client, counterSettlements(caps));
  return reaped;
}

/** Store.releaseInDoubt on PostgreSQL, inside the caller's READ COMMITTED transaction (see the header). */
export async function releaseInDoubtIn(
  client: pg.PoolClient,
  inputs: readonly ReserveInput[],
  settledAt: string,
): Promise<ReapedAttempt[]> {
  const sorted = [...inputs].sort((a, b) =>
    a.attemptId < b.attemptId ? -1 : a.attemptId > b.attemptId ? 1 : 0,
  );
  // A tombstone holds no Run (the Run's row is never touched) and no reservation.
  const tombstones = await client.query<Row>(
    `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, cost, lease_expires_at, owner, endpoint,
       alias, connection, profile, upstream_model, created_at, settled_at, outcome)
     SELECT id, project_id, key_id, NULL, 'released', 0, 0, created_at, owner, endpoint, alias, connection, profile,
       upstream_model, created_at, $14, 'not_sent'
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::text[], $8::text[],
       $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])
       AS d(id, project_id, key_id, run_id, reservation, lease_expires_at, owner, endpoint, alias, connection, profile,
         upstream_model, created_at)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [...attemptColumns(sorted), settledAt],
  );
  const tombstoned = new Set(tombstones.rows.map((row) => String(row.id)));
  const present = sorted.filter((input) => !tombstoned.has(input.attemptId));
  if (present.length === 0) return [];
  const found = await client.query<Row>(
    "SELECT * FROM attempts WHERE id = ANY($1::text[]) AND state = 'reserved' ORDER BY id FOR UPDATE",
    [present.map((input) => input.attemptId)],
  );
  if (found.rows.length === 0) return [];
  const settledMs = Date.parse(settledAt);
  const released = found.rows.map((attempt) => ({
    ...settledAttemptFromRow(attempt, 0),
    attemptId: String(attempt.id),
    durationMs: Math.max(0, settledMs - new Date(attempt.created_at as Date | string).getTime()),
  }));
  await settleBatch(
    client,
    released.map((attempt) => ({
      attemptId: attempt.attemptId,
      state: 'released' as const,
      outcome: 'not_sent' as const,
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      durationMs: attempt.durationMs,
      settledAt,
    })),
  );
  return released;
}
