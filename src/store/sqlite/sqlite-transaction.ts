/** The transaction runner a SQLite sub-repository receives from SqliteStore (one BEGIN IMMEDIATE transaction). */
export type SqliteTransaction = <T>(work: () => T) => T;
