/**
 * Migration 15: the audit's sequence is its rowid without AUTOINCREMENT. The numbers go on from the
 * largest one as before, a settlement no longer writes sqlite_sequence, and the audit stays
 * append-only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrationSteps } from './migrate.js';

const NOW = '2026-01-01T00:00:00.000Z';
const INSERT_AUDIT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
  reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
  VALUES (?, 'prj', 'key', NULL, '/v1/messages', 'a', 'c', 'p', 'm', 'settled', 10, 4, 'completed', 200, 1, 0, '${NOW}', '${NOW}')`;

const auditSequence = (db: Database.Database): number | undefined =>
  (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").get() as { seq: number } | undefined)
    ?.seq;

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('SQLite migration 15 (audit sequence without AUTOINCREMENT)', () => {
  it('keeps the entries, numbers new ones from the largest, and no longer writes sqlite_sequence', () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-migration-15-'));
    folders.push(folder);
    const path = join(folder, 'svc.db');
    const before = new Database(path);
    applyMigrationSteps(before, 1, 15);
    for (const id of ['att_1', 'att_2', 'att_3']) before.prepare(INSERT_AUDIT).run(id);
    expect(auditSequence(before)).toBe(3);
    before.close();

    const db = new Database(path);
    applyMigrationSteps(db, 15, 16);
    const table = db
      .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'audit'")
      .get() as {
      sql: string;
    };
    expect(table.sql).toContain('sequence INTEGER PRIMARY KEY');
    expect(table.sql).not.toContain('AUTOINCREMENT');
    expect(db.prepare('SELECT sequence, attempt_id FROM audit ORDER BY sequence').all()).toEqual([
      { sequence: 1, attempt_id: 'att_1' },
      { sequence: 2, attempt_id: 'att_2' },
      { sequence: 3, attempt_id: 'att_3' },
    ]);

    // A rolled-back insert gives its number back, as it did with AUTOINCREMENT.
    expect(() =>
      db.transaction(() => {
        db.prepare(INSERT_AUDIT).run('att_rolled_back');
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    const next = db.prepare(`${INSERT_AUDIT} RETURNING sequence`).get('att_4') as { sequence: number };
    expect(next.sequence).toBe(4);
    expect(auditSequence(db)).toBe(3);

    expect(() => db.prepare("UPDATE audit SET cost = 0 WHERE attempt_id = 'att_4'").run()).toThrow(
      'audit is append-only',
    );
    expect(() => db.prepare("DELETE FROM audit WHERE attempt_id = 'att_4'").run()).toThrow(
      'audit is append-only',
    );
    expect(() => db.prepare(INSERT_AUDIT).run('att_4')).toThrow(/UNIQUE/);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    // Another connection, opened after the edit, reads the same schema.
    const reopened = new Database(path);
    expect(reopened.prepare(`${INSERT_AUDIT} RETURNING sequence`).get('att_5')).toEqual({ sequence: 5 });
    reopened.close();
  });
});
