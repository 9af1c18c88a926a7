/**
 * Migration 18: a call's ledger writes touch three B-trees fewer (attempts_open, audit_by_project,
 * the outcome trigger), and every reader of the two indexes still reads by a key: the reaper
 * through the partial index of reserved attempts, the reports' tails and `listAudit` by sequence.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type Statement, spendSql, sqliteAttributeSpendSql } from '../report-sql.js';
import { applyMigrationSteps } from './migrate.js';
import { SqliteStore } from './sqlite-store.js';

const NOW = '2026-01-01T00:00:00.000Z';
const INSERT_AUDIT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
  reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
  VALUES (?, ?, 'key', NULL, '/v1/messages', 'a', 'c', 'p', 'm', 'settled', 10, 4, ?, 200, 1, 0, '${NOW}', '${NOW}')`;
const INSERT_ATTEMPT = `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner,
  endpoint, alias, connection, profile, upstream_model, created_at)
  VALUES (?, 'prj', 'key', NULL, ?, 10, ?, 'o', '/v1/messages', 'a', 'c', 'p', 'm', '${NOW}')`;

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function newPath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'svc-migration-18-'));
  folders.push(folder);
  return join(folder, 'svc.db');
}

const schemaNames = (db: Database.Database): string[] =>
  (
    db
      .prepare("SELECT name FROM sqlite_schema WHERE type IN ('index', 'trigger') ORDER BY name")
      .all() as Array<{ name: string }>
  ).map((row) => row.name);

const plan = (db: Database.Database, statement: Statement): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.values) as Array<{ detail: string }>)
    .map((row) => row.detail)
    .join(' | ');

describe('SQLite migration 18 (three B-trees fewer on the ledger path)', () => {
  it('drops the two indexes and the trigger, keeps every row, and refuses an unknown outcome by a CHECK', () => {
    const path = newPath();
    const before = new Database(path);
    applyMigrationSteps(before, 1, 18);
    before.prepare(INSERT_AUDIT).run('att_1', 'prj', 'completed');
    before.prepare(INSERT_AUDIT).run('att_2', 'prj_other', 'unknown');
    expect(schemaNames(before)).toEqual(
      expect.arrayContaining(['attempts_open', 'audit_by_project', 'audit_outcome_known']),
    );
    before.close();

    const db = new Database(path);
    applyMigrationSteps(db, 18, 19);
    const names = schemaNames(db);
    for (const gone of ['attempts_open', 'audit_by_project', 'audit_outcome_known'])
      expect(names).not.toContain(gone);
    expect(names).toEqual(
      expect.arrayContaining(['attempts_open_by_project', 'audit_by_run', 'audit_log_by_project']),
    );
    expect(db.prepare('SELECT attempt_id, outcome FROM audit ORDER BY sequence').all()).toEqual([
      { attempt_id: 'att_1', outcome: 'completed' },
      { attempt_id: 'att_2', outcome: 'unknown' },
    ]);
    expect(() => db.prepare(INSERT_AUDIT).run('att_bad', 'prj', 'finished')).toThrow(
      /CHECK constraint failed/,
    );
    for (const outcome of ['refused_upstream', 'not_sent', 'cancelled_running', 'lease_expired'])
      db.prepare(INSERT_AUDIT).run(`att_${outcome}`, 'prj', outcome);
    expect(db.prepare('SELECT count(*) AS n FROM audit').get()).toEqual({ n: 6 });
    // Still append-only.
    expect(() => db.prepare("UPDATE audit SET cost = 0 WHERE attempt_id = 'att_1'").run()).toThrow(
      /append-only/,
    );
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    // Another connection reads the edited table text.
    const reopened = new Database(path);
    expect(() => reopened.prepare(INSERT_AUDIT).run('att_bad_2', 'prj', '')).toThrow(
      /CHECK constraint failed/,
    );
    reopened.close();
  });

  it('reads the reaper, the reports and the audit listing by a key, not through a whole table or Project', async () => {
    const path = newPath();
    const store = new SqliteStore({ path, synchronous: 'normal' });
    await store.migrate();
    await store.close();
    const db = new Database(path);

    const expired = "SELECT id, created_at FROM attempts WHERE state = 'reserved' AND lease_expires_at <= ?";
    expect(plan(db, { sql: expired, values: [NOW] })).toMatch(/USING INDEX attempts_open_by_project/);
    const insert = db.prepare(INSERT_ATTEMPT);
    insert.run('att_old', 'reserved', '2025-01-01T00:00:00.000Z');
    insert.run('att_live', 'reserved', '2027-01-01T00:00:00.000Z');
    insert.run('att_done', 'settled', '2025-01-01T00:00:00.000Z');
    expect(db.prepare(expired).all(NOW)).toEqual([{ id: 'att_old', created_at: NOW }]);

    const query = {
      projectId: 'prj',
      fromIso: '2026-01-01T00:00:00.000Z',
      toIso: '2026-01-02T00:00:00.000Z',
      bucket: 'day' as const,
      dimensions: ['alias' as const],
    };
    // The tails above the watermarks: a range of the table's key, never an index of the Project.
    for (const statement of [
      spendSql(query),
      sqliteAttributeSpendSql({ ...query, dimensions: [] }, { kind: 'tag', name: 'team' }),
    ]) {
      const detail = plan(db, statement);
      expect(detail).toMatch(/SEARCH a USING INTEGER PRIMARY KEY \(rowid>\?\)/);
      expect(detail).not.toMatch(/audit_log_by/);
    }
    db.close();

    // The audit listing of a Project: in sequence order, the Project's rows only.
    const reading = new SqliteStore({ path, synchronous: 'normal' });
    await reading.migrate();
    const raw = new Database(path);
    for (let index = 0; index < 6; index++)
      raw.prepare(INSERT_AUDIT).run(`att_${index}`, index % 2 === 0 ? 'prj' : 'prj_other', 'completed');
    raw.close();
    const listed = await reading.listAudit({ projectId: 'prj', afterSequence: 0, limit: 2 });
    expect(listed.map((entry) => entry.attemptId)).toEqual(['att_0', 'att_2']);
    const next = await reading.listAudit({ projectId: 'prj', afterSequence: listed[1]!.sequence, limit: 5 });
    expect(next.map((entry) => entry.attemptId)).toEqual(['att_4']);
    await reading.close();
  });
});
