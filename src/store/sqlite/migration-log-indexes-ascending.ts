/**
 * Migration 16: the request log's indexes in ascending order.
 *
 * Migration 11 declared them in the log's order (created_at DESC, attempt_id DESC). An index built
 * that way puts each new entry, the newest, at the left end of its key's range, and SQLite splits an
 * index leaf there with its general rebalancing of neighbouring pages; in ascending order the new
 * entry goes to the right end, after the last one written. The log reads an ascending index
 * backwards with the same plan (a search of the index, no sort) and the same rows in the same
 * order. The indexes are rebuilt once, by this migration: about 18 s per million audit entries
 * (each index reads the whole table), so a large audit is announced on stderr first.
 */
import type Database from 'better-sqlite3';

/** Audit entries above which the rebuild is announced (about two seconds of it). */
const ANNOUNCED_FROM = 100_000;

const INDEXES = [
  ['audit_log_by_project', 'project_id, created_at, attempt_id'],
  ['audit_log_by_key', 'project_id, key_id, created_at, attempt_id'],
  ['audit_log_by_run', 'run_id, created_at, attempt_id'],
  ['audit_log_by_work_unit', 'work_unit_id, created_at, attempt_id'],
] as const;

export const SQLITE_MIGRATION_LOG_INDEXES_ASCENDING = {
  version: 16,
  name: 'request log indexes in ascending order',
  notice(db: Database.Database): string | undefined {
    const row = db.prepare('SELECT max(sequence) AS entries FROM audit').get() as { entries: number | null };
    const entries = row.entries ?? 0;
    if (entries < ANNOUNCED_FROM) return undefined;
    const seconds = Math.ceil((entries / 1_000_000) * 18);
    return `SQLite migration 16 rebuilds the request log's four indexes over about ${entries} audit entries, once (about ${seconds} s on a fast disk)`;
  },
  sql: INDEXES.map(
    ([name, columns]) => `DROP INDEX ${name};\nCREATE INDEX ${name} ON audit(${columns});`,
  ).join('\n'),
} as const;
