/**
 * Spend caps on SQLite (money/spend-caps.ts, store/cap-tally.ts), inside the ledger's serial
 * transaction: one writer, so reading the counters, deciding (CapTally) and writing is exact here.
 * The decision is taken before anything is written, which keeps the group commit's rule that a
 * refused item has written nothing.
 */
import type { CounterKey, SpendCaps } from '../../money/spend-caps.js';
import { type CounterSettlement, type CounterUsage, counterId } from '../cap-tally.js';
import type { Row } from '../rows.js';
import type { Sql } from './transaction.js';

/** The caps stored on a key (none for an unknown key or a key without caps). */
export function keyCaps(sql: Sql, keyId: string): SpendCaps {
  const row = sql('SELECT limits FROM gateway_keys WHERE id = ?').get(keyId) as Row | undefined;
  return row?.limits ? (JSON.parse(String(row.limits)) as SpendCaps) : {};
}

export function counterUsage(sql: Sql, counters: readonly CounterKey[]): Map<string, CounterUsage> {
  const usage = new Map<string, CounterUsage>();
  for (const counter of counters) {
    const row = sql(
      'SELECT committed, reserved FROM spend_counters WHERE scope = ? AND owner_id = ? AND period = ?',
    ).get(counter.scope, counter.ownerId, counter.period) as Row | undefined;
    if (row)
      usage.set(counterId(counter), { committed: Number(row.committed), reserved: Number(row.reserved) });
  }
  return usage;
}

export function addReservations(
  sql: Sql,
  reservations: ReadonlyArray<{ counter: CounterKey; amount: number }>,
): void {
  for (const { counter, amount } of reservations) {
    sql(
      `INSERT INTO spend_counters (scope, owner_id, period, committed, reserved) VALUES (?, ?, ?, 0, ?)
       ON CONFLICT (scope, owner_id, period) DO UPDATE SET reserved = reserved + excluded.reserved`,
    ).run(counter.scope, counter.ownerId, counter.period, amount);
  }
}

export function settleCounters(sql: Sql, settlements: readonly CounterSettlement[]): void {
  for (const { counter, released, committed } of settlements) {
    sql(
      'UPDATE spend_counters SET reserved = reserved - ?, committed = committed + ? WHERE scope = ? AND owner_id = ? AND period = ?',
    ).run(released, committed, counter.scope, counter.ownerId, counter.period);
  }
}
