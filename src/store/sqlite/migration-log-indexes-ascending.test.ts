/**
 * Migration 16: the request log's four indexes in ascending order. An existing audit keeps its
 * entries, the log's queries still search an index without sorting, and they read the log's order.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AttemptLogQuery } from '../request-log-port.js';
import { settledLogSql } from '../request-log-sql.js';
import { applyMigrationSteps } from './migrate.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

const INSERT_AUDIT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, work_unit_id, endpoint, alias, connection, profile,
  upstream_model, state, reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
  VALUES (?, 'prj', ?, ?, ?, '/v1/messages', 'a', 'c', 'p', 'm', 'settled', 10, 4, 'completed', 200, 1, 0, ?, ?)`;

const LOG_INDEXES = [
  'audit_log_by_project',
  'audit_log_by_key',
  'audit_log_by_run',
  'audit_log_by_work_unit',
];

describe('SQLite migration 16 (request log indexes in ascending order)', () => {
  it('rebuilds the four indexes ascending; the log reads them in its order without sorting', () => {
    const db = new Database(':memory:');
    applyMigrationSteps(db, 1, 16);
    // Entries of two keys, Runs and Work Units; some share a creation time (the attempt id decides).
    const entries: Array<{ id: string; key: string; run: string; unit: string; at: string }> = [];
    for (let index = 0; index < 40; index++) {
      const at = `2026-01-01T00:00:${String(Math.floor(index / 3)).padStart(2, '0')}.000Z`;
      const entry = {
        id: `att_${String((index * 7) % 40).padStart(2, '0')}`,
        key: `key_${index % 2}`,
        run: `run_${index % 3}`,
        unit: `wu_${index % 2}`,
        at,
      };
      entries.push(entry);
      db.prepare(INSERT_AUDIT).run(entry.id, entry.key, entry.run, entry.unit, at, at);
    }
    applyMigrationSteps(db, 16, 17);

    for (const name of LOG_INDEXES) {
      const index = db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').get(name) as { sql: string };
      expect(index.sql).not.toMatch(/DESC/);
    }
    const logOrder = (a: (typeof entries)[number], b: (typeof entries)[number]) =>
      a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1;
    const cursor = { createdAt: '2026-01-01T00:00:07.000Z', id: 'att_20' };
    const cases: Array<[Partial<AttemptLogQuery>, string, (entry: (typeof entries)[number]) => boolean]> = [
      [{}, 'audit_log_by_project', () => true],
      [
        { after: cursor },
        'audit_log_by_project',
        (e) => e.at < cursor.createdAt || (e.at === cursor.createdAt && e.id < cursor.id),
      ],
      [{ keyId: 'key_1' }, 'audit_log_by_key', (e) => e.key === 'key_1'],
      [
        { runId: 'run_2', after: cursor },
        'audit_log_by_run',
        (e) =>
          e.run === 'run_2' && (e.at < cursor.createdAt || (e.at === cursor.createdAt && e.id < cursor.id)),
      ],
      [{ workUnitId: 'wu_0' }, 'audit_log_by_work_unit', (e) => e.unit === 'wu_0'],
    ];
    for (const [filters, index, kept] of cases) {
      const statement = settledLogSql('sqlite', {
        projectId: 'prj',
        limit: 15,
        ...filters,
      } as AttemptLogQuery);
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.values) as Array<{
          detail: string;
        }>
      )
        .map((row) => row.detail)
        .join(' ');
      expect(plan).toContain(`USING INDEX ${index}`);
      expect(plan).not.toContain('TEMP B-TREE');
      const read = (db.prepare(statement.sql).all(...statement.values) as Array<{ attempt_id: string }>).map(
        (row) => row.attempt_id,
      );
      expect(read).toEqual(
        entries
          .filter(kept)
          .sort(logOrder)
          .slice(0, 15)
          .map((entry) => entry.id),
      );
    }
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('announces the rebuild of a large audit before it starts, and stays quiet for a small one', () => {
    const db = new Database(':memory:');
    applyMigrationSteps(db, 1, 16);
    const migration = SQLITE_MIGRATIONS.find((each) => each.version === 16)!;
    db.prepare(INSERT_AUDIT).run(
      'att_small',
      'key',
      'run',
      'wu',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
    );
    expect(migration.notice!(db)).toBeUndefined();
    // The sequence numbers the entries: the largest stands for their count.
    db.prepare(
      INSERT_AUDIT.replace('(attempt_id,', '(sequence, attempt_id,').replace('VALUES (?,', 'VALUES (?, ?,'),
    ).run(2_500_000, 'att_large', 'key', 'run', 'wu', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:01.000Z');
    expect(migration.notice!(db)).toBe(
      "SQLite migration 16 rebuilds the request log's four indexes over about 2500000 audit entries, once (about 45 s on a fast disk)",
    );
    db.close();
  });
});
