/**
 * Spend caps on SQLite (ledger/spend-caps.ts), inside the ledger's serial transaction. SQLite has
 * one writer and the ledger's group commit runs items one after another, so "read every counter,
 * decide, then write" is exact here; the order matters for the group commit's rule that a refused
 * item has written nothing: reserve() checks every cap BEFORE the Run's conditional update and
 * only then writes (PostgreSQL instead relies on conditional updates and rollback: postgres/caps.ts).
 */
import type Database from 'better-sqlite3';
import { type CapCounter, type CounterKey, capRefusal, type SpendCaps } from '../../ledger/spend-caps.js';
import type { Row } from '../rows.js';

type Sql = (text: string) => Database.Statement;

/** The caps stored on a key (none for an unknown key). */
export function keyCaps(sql: Sql, keyId: string): SpendCaps {
  const row = sql('SELECT limits FROM gateway_keys WHERE id = ?').get(keyId) as Row | undefined;
  return row?.limits ? (JSON.parse(String(row.limits)) as SpendCaps) : {};
}

/** Throws key_budget_exceeded / project_budget_exceeded naming the first cap `amount` does not fit. */
export function checkCaps(sql: Sql, counters: readonly CapCounter[], amount: number): void {
  for (const counter of counters) {
    const row = sql(
      'SELECT committed, reserved FROM spend_counters WHERE scope = ? AND owner_id = ? AND period = ?',
    ).get(counter.scope, counter.ownerId, counter.period) as Row | undefined;
    const usage = { committed: Number(row?.committed ?? 0), reserved: Number(row?.reserved ?? 0) };
    if (usage.committed + usage.reserved + amount > counter.limitMicrosUsd)
      throw capRefusal(counter, usage, amount);
  }
}

/** Adds the reservation to every counter (after checkCaps admitted it in the same transaction). */
export function reserveCaps(sql: Sql, counters: readonly CounterKey[], amount: number): void {
  for (const counter of counters) {
    sql(
      `INSERT INTO spend_counters (scope, owner_id, period, committed, reserved) VALUES (?, ?, ?, 0, ?)
       ON CONFLICT (scope, owner_id, period) DO UPDATE SET reserved = reserved + excluded.reserved`,
    ).run(counter.scope, counter.ownerId, counter.period, amount);
  }
}

/** Releases the reservation and commits the cost on the counters the attempt was admitted on. */
export function settleCaps(
  sql: Sql,
  counters: readonly CounterKey[],
  reservation: number,
  commit: number,
): void {
  for (const counter of counters) {
    sql(
      'UPDATE spend_counters SET reserved = reserved - ?, committed = committed + ? WHERE scope = ? AND owner_id = ? AND period = ?',
    ).run(reservation, commit, counter.scope, counter.ownerId, counter.period);
  }
}
