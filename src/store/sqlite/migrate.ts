/** Applies the SQLite migrations not yet recorded in schema_migrations, each in its own transaction. */
import type Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS, type SqliteMigration } from './migrations.js';
import type { SqliteTransaction } from './transaction.js';

export function migrate(db: Database.Database, transaction: SqliteTransaction): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map(
      (row) => row.version,
    ),
  );
  for (const migration of SQLITE_MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    const notice = migration.notice?.(db);
    if (notice !== undefined) process.emitWarning(notice, { code: 'SVC_SQLITE_MIGRATION' });
    transaction(() => {
      applyStep(db, migration);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    });
  }
}

/** One migration's SQL, then its apply step; the caller's transaction holds them together. */
function applyStep(db: Database.Database, migration: SqliteMigration): void {
  db.exec(migration.sql);
  migration.apply?.(db);
}

/**
 * The migrations numbered from `from` up to `below` (excluded), each in its own transaction, without
 * recording them: a database as an earlier version left it, for the migrations' own tests.
 */
export function applyMigrationSteps(db: Database.Database, from: number, below: number): void {
  for (const migration of SQLITE_MIGRATIONS)
    if (migration.version >= from && migration.version < below)
      db.transaction(() => applyStep(db, migration))();
}
