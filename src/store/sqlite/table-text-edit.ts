/**
 * Edits a table's CREATE TABLE text in sqlite_schema in place (SQLite's documented procedure for a
 * change that leaves the table's pages as they are), for migrations that would otherwise rebuild a
 * large table. Each replacement must find its text exactly once, or nothing is changed.
 */
import type Database from 'better-sqlite3';

export function editTableText(
  db: Database.Database,
  migration: number,
  table: string,
  replacements: ReadonlyArray<readonly [before: string, after: string]>,
): void {
  const row = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table) as
    | { sql: string }
    | undefined;
  if (!row) throw new Error(`migration ${migration}: the ${table} table is missing`);
  let text = row.sql;
  for (const [before, after] of replacements) {
    if (text.split(before).length !== 2)
      throw new Error(`migration ${migration}: the ${table} table does not hold exactly one ${before}`);
    text = text.replace(before, after);
  }
  const version = db.pragma('schema_version', { simple: true }) as number;
  // SQLite refuses edits of sqlite_schema in defensive mode (better-sqlite3's default): lifted for
  // this edit only.
  db.unsafeMode(true);
  try {
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?").run(text, table);
    db.pragma(`schema_version = ${version + 1}`);
  } finally {
    // RESET: off again, and this connection parses its schema anew (the version bump tells the
    // others; this one set it, so it would keep the old text compiled until it reopened).
    db.pragma('writable_schema = RESET');
    db.unsafeMode(false);
  }
}
