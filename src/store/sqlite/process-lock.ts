/**
 * One writer process per SQLite file: exactness on SQLite rests on serial execution in one process,
 * so a second gateway on the same file refuses to start. The lock file holds the owner's PID; a
 * lock left by a process that no longer exists (killed) is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export interface ProcessLock {
  release(): void;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireProcessLock(path: string): ProcessLock {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const descriptor = openSync(path, 'wx', 0o600);
      writeSync(descriptor, String(process.pid));
      closeSync(descriptor);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner)) {
        throw new Error(
          `the SQLite store is in use by process ${owner} (lock file ${path}); one gateway process per SQLite file — use PostgreSQL for several replicas`,
        );
      }
      if (owner === process.pid) {
        throw new Error(`the SQLite store is already open in this process (lock file ${path})`);
      }
      unlinkSync(path);
    }
  }
  throw new Error(`could not take the SQLite lock file ${path}`);
}
