/** Applies the SQLite migrations not yet recorded in schema_migrations, each in its own transaction. */
import type Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from './migrations.js';
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
      db.exec(migration.sql);
      migration.apply?.(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    });
  }
}
