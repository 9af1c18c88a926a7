/**
 * Migration 15: the audit table numbers its entries by rowid alone, without AUTOINCREMENT.
 *
 * AUTOINCREMENT only changes how a new rowid is chosen: it keeps the largest one ever used in
 * sqlite_sequence, so a number freed by deleting the newest row is not given again. The audit is
 * append-only (its triggers refuse every UPDATE and DELETE) and a rolled-back insert rolls its
 * sqlite_sequence update back too, so the two ways give the same numbers: the largest sequence plus
 * one. Without it, a settlement writes one B-tree fewer (the sqlite_sequence row: a statement and a
 * WAL frame per commit). The table's pages are the same either way, so the change is the schema's
 * text alone, edited in place as migration 9 does; the stale sqlite_sequence row is left, unread.
 */
import type Database from 'better-sqlite3';
import { editTableText } from './table-text-edit.js';

export const SQLITE_MIGRATION_AUDIT_ROWID = {
  version: 15,
  name: 'audit: sequence is the rowid, without AUTOINCREMENT',
  sql: '',
  apply(db: Database.Database): void {
    editTableText(db, 15, 'audit', [
      ['sequence INTEGER PRIMARY KEY AUTOINCREMENT', 'sequence INTEGER PRIMARY KEY'],
    ]);
  },
} as const;
