/**
 * Opening the SQLite file: the one-writer lock file, the pragmas the ledger is tuned for and the
 * checkpoint worker (checkpointer.ts). SqliteStore owns what this returns.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { WalCheckpointer } from './checkpointer.js';
import { acquireProcessLock, type ProcessLock } from './process-lock.js';

export interface SqliteOptions {
  path: string;
  synchronous: 'normal' | 'full';
  /**
   * Take the one-writer lock file (the gateway does). Short-lived CLI commands that touch no
   * budget (keys, audit) open the file without it and rely on SQLite's own locking.
   */
  exclusive?: boolean;
}

/** How often the checkpoint worker folds the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 1000;
/** The WAL file is truncated to this size when the writer rewinds it. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export interface SqliteConnection {
  db: Database.Database;
  lock: ProcessLock | undefined;
  checkpointer: WalCheckpointer | undefined;
}

/** Opens the file; `onCheckpointerFailed` is told when the checkpoint worker ends on its own. */
export function openConnection(
  options: SqliteOptions,
  onCheckpointerFailed: (reason: string) => void,
): SqliteConnection {
  let lock: ProcessLock | undefined;
  let db: Database.Database;
  let checkpointer: WalCheckpointer | undefined;
  if (options.path !== ':memory:') {
    mkdirSync(dirname(options.path), { recursive: true });
    if (options.exclusive !== false) lock = acquireProcessLock(`${options.path}.lock`);
  }
  try {
    db = new Database(options.path);
    // 1 KiB pages for a new file (an existing file keeps its own: docs/operations.md): a ledger
    // commit writes every page it touched to the WAL, and its rows are small, so smaller pages
    // make each commit cheaper (bench/ledger.ts: c1 -30 %, c64 -10 % CPU per reserve + settle).
    db.pragma('page_size = 1024');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // A page cache (4 MiB) for the ledger's working set: the Runs, the open attempts and the
    // right edge of the append-only tables and their indexes. Not more: a B-tree split that
    // reorders its new pages renumbers one through the lock page's number (page 1,048,577 at
    // 1 KiB), and the commit after it then scans the cache's whole hash table, whose size
    // follows the pages cached. With 16 MiB a reservation and settlement cost 1.5-2 us more on a
    // ledger of 200,000 calls (bench/ledger.ts), and the RSS is larger.
    db.pragma('cache_size = -4096');
    if (options.exclusive !== false) {
      // No checkpoint on the event loop: a worker thread with its own connection does them
      // (checkpointer.ts), so their fsync never lands on a request's latency.
      db.pragma('wal_autocheckpoint = 0');
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      if (options.path !== ':memory:') {
        checkpointer = new WalCheckpointer(options.path, CHECKPOINT_INTERVAL_MS, onCheckpointerFailed);
      }
    }
  } catch (error) {
    lock?.release();
    throw error;
  }
  return { db, lock, checkpointer };
}
