/**
 * One writer process per SQLite file: exactness on SQLite rests on serial execution in one process,
 * so a second gateway on the same file refuses to start.
 *
 * The lock is an operating-system lock, not a PID file: a small SQLite database opened in exclusive
 * locking mode holds a POSIX lock for as long as the process lives, and the kernel releases it when
 * the process dies (SIGKILL included). Two processes starting at once cannot both win, and a PID
 * reused by an unrelated process cannot block a restart. The owner's PID is written beside it only
 * to name the owner in the error message.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface ProcessLock {
  release(): void;
}

function ownerOf(pidFile: string): string {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    return Number.isInteger(pid) ? `process ${pid}` : 'another process';
  } catch {
    return 'another process';
  }
}

export function acquireProcessLock(path: string): ProcessLock {
  const pidFile = `${path}.pid`;
  const lock = new Database(path, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in exclusive locking mode it is kept until close.
    lock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS owner (pid INTEGER); DELETE FROM owner; COMMIT');
    lock.prepare('INSERT INTO owner (pid) VALUES (?)').run(process.pid);
  } catch (error) {
    lock.close();
    if (
      error instanceof Database.SqliteError &&
      (error.code === 'SQLITE_BUSY' || error.code === 'SQLITE_LOCKED')
    ) {
      throw new Error(
        `the SQLite store is in use by ${ownerOf(pidFile)} (lock ${path}); one gateway process per SQLite file — use PostgreSQL for several replicas`,
      );
    }
    throw error;
  }
  writeFileSync(pidFile, String(process.pid));
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      lock.close();
      // The lock database itself stays: unlinking it could race with a process that just opened it.
      try {
        if (readFileSync(pidFile, 'utf8') === String(process.pid)) unlinkSync(pidFile);
      } catch {
        // already gone
      }
    },
  };
}
