/**
 * Migration 10: batches created before it get their created_at from their records, and the page
 * queries of GET /v1/files and GET /v1/batches read through the (project_id, created_at, id) indexes.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { batchListSql, fileListSql } from '../resource-lists.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

describe('SQLite migration 10 (resource lists)', () => {
  it('fills created_at of existing batches, and pages through the new indexes', () => {
    const db = new Database(':memory:');
    for (const migration of SQLITE_MIGRATIONS.filter((each) => each.version < 10)) db.exec(migration.sql);
    const insert = db.prepare(
      "INSERT INTO batches (id, project_id, status, delete_after, record) VALUES (?, 'prj', 'validating', 9e15, ?)",
    );
    insert.run('batch_old', JSON.stringify({ id: 'batch_old', createdAt: 1000 }));
    insert.run('batch_new', JSON.stringify({ id: 'batch_new', createdAt: 2000 }));
    db.exec(SQLITE_MIGRATIONS.find((each) => each.version === 10)!.sql);
    expect(db.prepare('SELECT id, created_at FROM batches ORDER BY id').all()).toEqual([
      { id: 'batch_new', created_at: 2000 },
      { id: 'batch_old', created_at: 1000 },
    ]);
    const batches = batchListSql(
      'prj',
      { limit: 10, now: 0, after: { createdAt: 2000, id: 'batch_new' } },
      () => '?',
    );
    expect(db.prepare(batches.sql).all(...batches.params)).toEqual([
      { record: expect.stringContaining('batch_old') },
    ]);
    const plan = (page: { sql: string; params: unknown[] }) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${page.sql}`).all(...page.params) as Array<{ detail: string }>)
        .map((row) => row.detail)
        .join(' ');
    expect(plan(batches)).toMatch(/USING INDEX batches_by_project_created/);
    const files = fileListSql(
      'prj',
      { limit: 10, order: 'desc', nowIso: '2026-01-01T00:00:00.000Z' },
      () => '?',
    );
    expect(plan(files)).toMatch(/USING INDEX files_by_project_created/);
    db.close();
  });
});
