/**
 * Migration 4 maps the free-string outcomes of existing rows onto the settlement outcome union
 * (SQLite; the PostgreSQL migration uses the same CASE, settlement-outcome-sql.ts).
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from './migrations.js';

const OLD_ROWS: Array<[string, string, string, number | null, string]> = [
  // attempt id, state, old outcome, http status, expected outcome
  ['att_ok', 'settled', 'ok', 200, 'completed'],
  ['att_429', 'settled', 'upstream_429', 429, 'refused_upstream'],
  ['att_rejected', 'settled', 'upstream_rejected', null, 'refused_upstream'],
  ['att_connect', 'released', 'transport_connect', null, 'not_sent'],
  ['att_drop', 'unknown', 'transport_dropped', null, 'unknown'],
  ['att_reaped', 'unknown', 'lease_expired', null, 'lease_expired'],
  ['att_cancel', 'unknown', 'cancelled_running', null, 'cancelled_running'],
];

describe('SQLite migration 4 (settlement outcomes)', () => {
  it('maps existing audit and attempt rows onto the union and refuses free strings afterwards', () => {
    const db = new Database(':memory:');
    for (const migration of SQLITE_MIGRATIONS.filter((each) => each.version < 4)) db.exec(migration.sql);
    const now = '2026-01-01T00:00:00.000Z';
    for (const [id, state, outcome, status] of OLD_ROWS) {
      db.prepare(
        `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, cost, lease_expires_at, owner, endpoint, alias, connection, profile, upstream_model, created_at, settled_at)
         VALUES (?, 'prj', 'key', NULL, ?, 10, 0, ?, 'o', '/v1/messages', 'a', 'c', 'p', 'm', ?, ?)`,
      ).run(id, state, now, now, now);
      db.prepare(
        `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
         VALUES (?, 'prj', 'key', NULL, '/v1/messages', 'a', 'c', 'p', 'm', ?, 10, 0, ?, ?, 1, 0, ?, ?)`,
      ).run(id, state, outcome, status, now, now);
    }
    db.exec(SQLITE_MIGRATIONS.find((each) => each.version === 4)!.sql);
    const audit = db.prepare('SELECT attempt_id, outcome FROM audit ORDER BY sequence').all();
    const attempts = db.prepare('SELECT id, outcome FROM attempts').all() as Array<{
      id: string;
      outcome: string;
    }>;
    expect(audit).toEqual(OLD_ROWS.map(([id, , , , expected]) => ({ attempt_id: id, outcome: expected })));
    expect(new Map(attempts.map((row) => [row.id, row.outcome]))).toEqual(
      new Map(OLD_ROWS.map(([id, , , , expected]) => [id, expected])),
    );
    // Still append-only, and only the union from now on.
    expect(() => db.exec("UPDATE audit SET outcome = 'completed'")).toThrow(/append-only/);
    expect(() =>
      db
        .prepare(
          `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
           VALUES ('att_new', 'prj', 'key', NULL, '/v1/messages', 'a', 'c', 'p', 'm', 'settled', 10, 0, 'ok', 200, 1, 0, ?, ?)`,
        )
        .run(now, now),
    ).toThrow(/settlement outcomes/);
    db.close();
  });
});
