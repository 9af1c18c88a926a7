/**
 * The ledger on PostgreSQL outside the group commit; each function runs inside the caller's READ
 * COMMITTED transaction. Every ledger statement is written once per path of writing: the batch
 * statements of ledger-batch.ts (reserveBatch, settleLocked), which the single calls, the reaper
 * and the reservations in doubt use too, and the one-statement batch of ledger-at-once.ts (the
 * functions of migration 9).
 *
 * - A single reservation (reserveIn, the fallback when a batch fails as a whole) is a batch of one:
 *   its Run locked (FOR UPDATE), the decision taken under the lock, the CHECK runs_within_budget
 *   behind it.
 * - Settlement locks the attempt row first (FOR UPDATE), so a settle racing the reaper or a
 *   retry applies once; then it updates the Run and appends the audit entry.
 * - Reaping claims expired attempts with FOR UPDATE SKIP LOCKED, so replicas reap concurrently
 *   without double-settling; claimed rows are settled in run_id order and their Runs locked in id
 *   order, so two reapers lock Runs in the same order and cannot deadlock.
 * - Spend caps (caps.ts): after the Run, the counters are locked (FOR UPDATE, counterOrder) and the
 *   reservation admitted only if it fits every one; a refusal writes nothing.
 *   Settlement (and the reaper, after all its Runs) releases/commits them last.
 * - Reservations in doubt (releaseInDoubtIn): tombstones for the absent ids first (INSERT ... ON
 *   CONFLICT DO NOTHING waits for a reservation of the same id still being written, so either the
 *   tombstone or the reservation wins, never both), then the reserved ones are locked in id order
 *   and settled as not_sent.
 * Lock order everywhere: attempt, then Run, then spend counters (counterOrder).
 */
import type pg from 'pg';
import type { ReapedAttempt, ReserveInput, SettledAttempt, SettleInput } from '../port.js';
import { type Row, settledAttemptFromRow } from '../rows.js';
import type { BatchOutcome } from './group-commit.js';
import { reserveBatch, settleLocked } from './ledger-batch.js';
import { attemptColumns } from './ledger-columns.js';

/**
 * One reservation in its own transaction (the fallback when a batch fails as a whole): the batch's
 * statements (ledger-batch.ts) for a batch of one, its refusal thrown.
 */
/**
 * A batch of one; its refusal is returned, not thrown, so the transaction still commits what the
 * refusal wrote (run.depleted) and the caller throws it after the commit.
 */
export async function reserveIn(client: pg.PoolClient, input: ReserveInput): Promise<BatchOutcome> {
  const [outcome] = await reserveBatch(client, [input]);
  return outcome;
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
  const [settled] = await settleLocked(client, found.rows, [input]);
  return settled && settledAttemptFromRow(settled.attempt, settled.amounts.commit);
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
  // In the claimed order (run_id, then id): settleLocked locks the Runs in id order and the counters
  // after every Run, so the reaper never waits for a Run while holding a counter.
  const settled = await settleLocked(
    client,
    claimed.rows,
    claimed.rows.map((attempt) => ({
      attemptId: String(attempt.id),
      state: 'unknown' as const,
      costMicrosUsd: 0,
      usage: null,
      outcome: 'lease_expired' as const,
      httpStatus: null,
      durationMs: Math.max(0, nowMs - new Date(attempt.created_at as Date | string).getTime()),
      settledAt: nowIso,
    })),
  );
  return settled.map(({ attempt, input, amounts }) => ({
    ...settledAttemptFromRow(attempt, amounts.commit),
    attemptId: input.attemptId,
    durationMs: input.durationMs,
  }));
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
  await settleLocked(
    client,
    found.rows,
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
