/** What a SQLite sub-repository receives from SqliteStore: its transaction runner and statement cache. */
import type Database from 'better-sqlite3';

/** One BEGIN IMMEDIATE transaction; driver failures become StoreUnavailableError. */
export type SqliteTransaction = <T>(work: () => T) => T;

/** A read outside a transaction, with the same error mapping as SqliteTransaction. */
export type SqliteRead = <T>(query: () => T) => T;

/** The store's prepared statement for `text` (prepared once per connection, then reused). */
export type Sql = (text: string) => Database.Statement;
