/**
 * WAL checkpoints off the event loop. better-sqlite3 is synchronous, so a checkpoint on the main
 * connection (SQLite's automatic one inside a commit, or a timer) makes every in-flight request wait
 * for its fsync. Here a worker thread owns a second connection to the same file and runs
 * `wal_checkpoint(PASSIVE)` on a timer: PASSIVE never waits for (or blocks) the main connection's
 * writes, and the fsync it does lands on the worker thread. The main connection runs with
 * `wal_autocheckpoint = 0`; `journal_size_limit` bounds the file left behind.
 *
 * The rewind: once a checkpoint has copied every frame back, the next write transaction starts the
 * WAL again from its beginning and, with synchronous NORMAL, fsyncs the new WAL header (SQLite does
 * so on purpose: an old frame must never be read as part of the new WAL after a power loss). Left to
 * the main connection, that fsync (5-50 ms on a busy disk) stalled the event loop about once a
 * second. So right after a complete checkpoint the worker makes that first write itself (it
 * rewrites user_version, unused by the gateway, with its own value), under a lock shared with the
 * main thread: the main thread never starts a ledger commit while the worker rewinds (it commits a
 * millisecond later instead, see group-commit.ts), so it never waits in SQLite's busy
 * handler either. If the main connection writes first, it rewinds (and syncs) as before.
 *
 * The worker is plain JavaScript (eval), so it runs the same under tsc output, tsx and vitest;
 * the driver's resolved path comes from this module, not from the worker's working directory.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
// Below the event loop on a shared core (Linux: a thread's own nice value): the fsync's writeback
// then fills the main thread's idle moments instead of taking turns with a request.
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, workerData.nice);
} catch { /* no /proc (not Linux): the default priority */ }
const db = new Database(workerData.path);
db.pragma('busy_timeout = 50');
const lock = new Int32Array(workerData.lock);
const rewind = db.transaction(() => {
  db.pragma('user_version = ' + db.pragma('user_version', { simple: true }));
});
const checkpoint = () => {
  let result;
  try { result = db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { return; /* busy: the next tick tries again */ }
  // Every frame is back in the file: the next write rewinds the WAL and syncs its new header.
  // Make that write here, so the sync lands on this thread (the main thread defers its ledger
  // commits while this holds the lock; see WalCheckpointer.tryHold).
  if (!result || result.busy !== 0 || result.log <= 0 || result.checkpointed !== result.log) return;
  if (Atomics.compareExchange(lock, 0, 0, 1) !== 0) return;
  try { rewind.immediate(); } catch { /* busy: the main connection rewinds it */ } finally {
    Atomics.store(lock, 0, 0);
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage('closed');
});
`;

/**
 * The worker's nice value (Linux: per thread). It shares the gateway's core: at 0 its writeback
 * (about 20 ms a second after sequential traffic) took turns with requests; at 10 a request
 * preempts it at once, and under load it still gets up to a tenth of the core, several times what
 * it uses at c64 (docs/performance.md, "The c1 tail").
 */
const CHECKPOINT_NICE = 10;

export class WalCheckpointer {
  private readonly worker: Worker;
  /** 1 while one side writes: the worker's WAL rewind, or the main thread's ledger commit. */
  private readonly lock = new Int32Array(new SharedArrayBuffer(4));

  private stopping = false;

  /**
   * `onFailure`: the thread ended without being stopped (an error, out of memory, terminated), once,
   * with the reason. The store then checkpoints on its own connection again (see SqliteStore), so
   * the WAL stays bounded; the gateway keeps serving.
   */
  constructor(path: string, intervalMs: number, onFailure: (reason: string) => void) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        driver,
        intervalMs,
        lock: this.lock.buffer,
        nice: CHECKPOINT_NICE,
      },
      // The thread only runs one pragma a second: a small heap keeps its RSS at ~10 MB.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
    });
    let reason: string | undefined;
    // A failing checkpointer must not take the gateway down ('exit' follows and reports it).
    this.worker.on('error', (error) => {
      reason = error.message;
    });
    this.worker.on('exit', (code) => {
      // A thread that ended holding the lock must not hold the ledger back.
      Atomics.store(this.lock, 0, 0);
      if (!this.stopping) onFailure(reason ?? `the thread exited with code ${code}`);
    });
    this.worker.unref();
  }

  /**
   * Takes the write lock unless the worker is rewinding the WAL (a write that syncs the file: a few
   * ms). False: commit a moment later instead of waiting for it on the event loop. Never blocks.
   */
  tryHold(): boolean {
    return Atomics.compareExchange(this.lock, 0, 0, 1) === 0;
  }

  release(): void {
    Atomics.store(this.lock, 0, 0);
  }

  /** Runs a last checkpoint on the worker, closes its connection and ends the thread. */
  async stop(): Promise<void> {
    this.stopping = true;
    const closed = new Promise<void>((resolve) => {
      const timeout = setTimeout(resolve, 2000);
      const done = () => {
        clearTimeout(timeout);
        resolve();
      };
      this.worker.once('message', done);
      this.worker.once('exit', done);
    });
    this.worker.postMessage('close');
    await closed;
    await this.worker.terminate();
  }
}
