/**
 * The ledger's common case on PostgreSQL, one autocommit statement per group-commit batch.
 *
 * ledger-batch.ts writes a batch in a transaction of five statements, and the hot Run's row lock is
 * held from the second to the commit: across three round trips, each of which waits for the
 * gateway's event loop to come round. Under load the reservation and the settlement batches of one
 * Run spend most of their time waiting for that lock, one for the other. Here the whole batch is one
 * statement, so the lock is held only while the database runs and commits it. The statement calls
 * a function of migration 9 (migration-ledger-functions.ts) that holds the batch's SQL, so the
 * database plans it once per connection, not at every batch.
 *
 * - reserveAtOnce admits a whole batch when it can: at most one Run (and one project on it), no
 *   spend cap on any of its calls, and room on the Run for all of it. The Run's UPDATE is
 *   conditional (re-checked against the latest row version under its lock), and
 *   the attempts are inserted only if it applied, so either every call is admitted or nothing is
 *   written. When nothing is written the batch goes to ledger-batch.ts, which decides call by call
 *   in arrival order and says why each refused call was refused.
 * - settleAtOnce settles every attempt of the batch that is still reserved and was admitted on no
 *   cap counter: the attempts, then their Runs' totals (locked in id order, after the attempts, as
 *   everywhere), then the audit entries in the batch's order. It returns the ids it settled; the
 *   others (settled already, unknown, or holding cap counters) go to ledger-batch.ts, for which a
 *   settled attempt is a no-op.
 */

import { isoTime } from '../../lib/clock.js';
import { reservationCounters } from '../../money/spend-caps.js';
import type { ReserveInput, SettleInput } from '../port.js';
import type { Row } from '../rows.js';
import { attemptColumns, attributionColumns, firstByte } from './ledger-columns.js';

/** One statement outside an explicit transaction (the caller's pool, gate and error mapping). */
export type Query = (text: string, values: unknown[]) => Promise<{ rows: Row[] }>;

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
  // svc_reserve_at_once (migration-ledger-functions.ts): every call admitted, or nothing written.
  const result = await query(
    `SELECT svc_reserve_at_once($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[],
       $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::text[],
       $15::bigint, $16::text, $17::text, $18::timestamptz, $19::text[], $20::text[], $21::text[], $22::text[])
       AS inserted`,
    [
      ...attemptColumns(inputs),
      [...new Set(inputs.map((input) => input.keyId))],
      amount,
      target.runId,
      target.projectId,
      isoTime(latest),
      ...attributionColumns(inputs),
    ],
  );
  return Number(result.rows[0]?.inserted) === inputs.length;
}

/**
 * Settles the batch's uncapped, still-reserved attempts in one statement; returns their ids. An
 * attempt named twice is settled by its first settlement, as in ledger-batch.ts; the repeat is
 * left to it (a no-op there).
 */
export async function settleAtOnce(query: Query, inputs: SettleInput[]): Promise<Set<string>> {
  const named = new Set<string>();
  const first = inputs.filter((input) => !named.has(input.attemptId) && named.add(input.attemptId));
  const column = <T>(read: (input: SettleInput) => T) => first.map(read);
  // svc_settle_at_once (migration-ledger-functions.ts): the ids it settled.
  const result = await query(
    `SELECT svc_settle_at_once($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::text[], $6::bigint[],
       $7::bigint[], $8::bigint[], $9::bigint[], $10::int[], $11::bigint[], $12::bigint[], $13::text[]) AS settled`,
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
      column((input) => firstByte(input)),
      column((input) => input.upstreamRequestId ?? null),
    ],
  );
  return new Set((result.rows[0]?.settled as string[] | undefined) ?? []);
}
