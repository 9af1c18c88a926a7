/**
 * Migration 9: the ledger's value checks without IN lists. The same values are accepted and
 * refused, existing rows stay as they were, and no ledger statement builds a temporary table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SETTLEMENT_OUTCOMES } from '../../money/settlement.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

const NOW = '2026-01-01T00:00:00.000Z';
const INSERT_ATTEMPT = `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint,
  alias, connection, profile, upstream_model, created_at, outcome)
  VALUES (?, 'prj', 'key', NULL, ?, 10, '${NOW}', 'o', '/v1/messages', 'a', 'c', 'p', 'm', '${NOW}', ?)`;
const SETTLE_ATTEMPT =
  "UPDATE attempts SET state = ?, cost = ?, settled_at = ?, outcome = ? WHERE id = ? AND state = 'reserved'";
const INSERT_AUDIT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
  reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
  VALUES (?, 'prj', 'key', NULL, '/v1/messages', 'a', 'c', 'p', 'm', 'settled', 10, 0, ?, 200, 1, 0, '${NOW}', '${NOW}')`;

const MIGRATION_9 = SQLITE_MIGRATIONS.find((each) => each.version === 9)!;

function databaseBefore9(path = ':memory:'): Database.Database {
  const db = new Database(path);
  for (const migration of SQLITE_MIGRATIONS.filter((each) => each.version < 9)) {
    db.exec(migration.sql);
    migration.apply?.(db);
  }
  return db;
}

function migrate9(db: Database.Database): void {
  db.transaction(() => {
    db.exec(MIGRATION_9.sql);
    MIGRATION_9.apply!(db);
  })();
}

function usesTemporaryTable(db: Database.Database, statement: string): boolean {
  const parameters = statement.split('?').length - 1;
  const program = db.prepare(`EXPLAIN ${statement}`).all(...Array(parameters).fill(null)) as Array<{
    opcode: string;
  }>;
  return program.some((operation) => operation.opcode === 'OpenEphemeral');
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('SQLite migration 9 (ledger checks without IN lists)', () => {
  it('keeps existing rows, accepts and refuses the same values, and builds no temporary table', () => {
    const db = databaseBefore9();
    db.prepare(INSERT_ATTEMPT).run('att_open', 'reserved', null);
    db.prepare(INSERT_ATTEMPT).run('att_done', 'settled', 'completed');
    db.prepare(INSERT_AUDIT).run('att_done', 'completed');
    for (const statement of [INSERT_ATTEMPT, SETTLE_ATTEMPT, INSERT_AUDIT])
      expect(usesTemporaryTable(db, statement)).toBe(true);

    migrate9(db);

    for (const statement of [INSERT_ATTEMPT, SETTLE_ATTEMPT, INSERT_AUDIT])
      expect(usesTemporaryTable(db, statement)).toBe(false);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare('SELECT id, state, outcome FROM attempts ORDER BY id').all()).toEqual([
      { id: 'att_done', state: 'settled', outcome: 'completed' },
      { id: 'att_open', state: 'reserved', outcome: null },
    ]);
    // Every value of the unions still goes in, and NULL where it did before.
    SETTLEMENT_OUTCOMES.forEach((outcome, index) => {
      db.prepare(INSERT_ATTEMPT).run(`att_${index}`, 'reserved', null);
      db.prepare(SETTLE_ATTEMPT).run(index % 2 ? 'settled' : 'unknown', 0, NOW, outcome, `att_${index}`);
      db.prepare(INSERT_AUDIT).run(`att_${index}`, outcome);
    });
    db.prepare(INSERT_ATTEMPT).run('att_released', 'released', 'not_sent');
    // Anything else is refused, by the constraint or the trigger, as before.
    expect(() => db.prepare(INSERT_ATTEMPT).run('att_bad_state', 'pending', null)).toThrow(
      /CHECK constraint failed/,
    );
    expect(() => db.prepare(INSERT_ATTEMPT).run('att_bad_outcome', 'settled', 'ok')).toThrow(
      /CHECK constraint failed/,
    );
    expect(() => db.prepare(SETTLE_ATTEMPT).run('settled', 0, NOW, 'ok', 'att_open')).toThrow(
      /CHECK constraint failed/,
    );
    expect(() => db.prepare(SETTLE_ATTEMPT).run('gone', 0, NOW, 'completed', 'att_open')).toThrow(
      /CHECK constraint failed/,
    );
    expect(() => db.prepare(INSERT_AUDIT).run('att_bad_audit', 'upstream_429')).toThrow(
      /settlement outcomes/,
    );
    expect(() => db.exec("UPDATE audit SET outcome = 'completed'")).toThrow(/append-only/);
    // Defensive mode is back on: the schema cannot be edited outside the migration.
    expect(() => db.prepare("UPDATE sqlite_schema SET sql = sql WHERE name = 'attempts'").run()).toThrow();
    db.close();
  });

  it('tells another connection to the file about the new schema', () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-migration-9-'));
    folders.push(folder);
    const path = join(folder, 'svc.db');
    const db = databaseBefore9(path);
    const other = new Database(path);
    // The other connection has read the old schema.
    expect(usesTemporaryTable(other, INSERT_ATTEMPT)).toBe(true);
    migrate9(db);
    // Its next statement finds the schema version moved and reads the schema again.
    expect(other.prepare('SELECT count(*) AS n FROM attempts').get()).toEqual({ n: 0 });
    expect(usesTemporaryTable(other, INSERT_ATTEMPT)).toBe(false);
    expect(() => other.prepare(INSERT_ATTEMPT).run('att_x', 'pending', null)).toThrow(
      /CHECK constraint failed/,
    );
    other.close();
    db.close();
  });

  it('changes nothing when the attempts table is not the one earlier migrations made', () => {
    const db = databaseBefore9();
    db.exec('ALTER TABLE attempts RENAME TO attempts_old');
    db.exec(
      "CREATE TABLE attempts (id TEXT PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('reserved', 'settled')))",
    );
    const before = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(() => migrate9(db)).toThrow(/does not hold exactly one CHECK \(state IN/);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(before);
    db.close();
  });
});
