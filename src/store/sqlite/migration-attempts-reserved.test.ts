/**
 * Migration 8: the index of open attempts keeps only reserved ones, and the reaper's queries still
 * use it (they ask for reserved attempts alone).
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from './migrations.js';

describe('SQLite migration 8 (partial index of reserved attempts)', () => {
  it('indexes only the reserved attempts of an existing database, and the reaper reads through it', () => {
    const db = new Database(':memory:');
    for (const migration of SQLITE_MIGRATIONS.filter((each) => each.version < 8)) db.exec(migration.sql);
    const insert = db.prepare(
      `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint, alias, connection, profile, upstream_model, created_at)
       VALUES (?, 'prj', 'key', NULL, ?, 10, '2026-01-01T00:00:00.000Z', 'o', '/v1/messages', 'a', 'c', 'p', 'm', '2026-01-01T00:00:00.000Z')`,
    );
    insert.run('att_open', 'reserved');
    insert.run('att_settled', 'settled');
    insert.run('att_unknown', 'unknown');
    db.exec(SQLITE_MIGRATIONS.find((each) => each.version === 8)!.sql);
    const expired = "SELECT id FROM attempts WHERE state = 'reserved' AND lease_expires_at <= ?";
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${expired}`).all('2027-01-01') as Array<{ detail: string }>;
    expect(plan.map((row) => row.detail).join(' ')).toMatch(/USING INDEX attempts_open/);
    expect(db.prepare(expired).all('2027-01-01')).toEqual([{ id: 'att_open' }]);
    // Only reserved attempts are in the index.
    const index = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'attempts_open'").get() as {
      sql: string;
    };
    expect(index.sql).toMatch(/ON attempts\(lease_expires_at\) WHERE state = 'reserved'$/);
    db.prepare("UPDATE attempts SET state = 'settled' WHERE id = 'att_open'").run();
    expect(db.prepare(expired).all('2027-01-01')).toEqual([]);
    db.close();
  });
});
