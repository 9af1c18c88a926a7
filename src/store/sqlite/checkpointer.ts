/**
 * WAL checkpoints off the event loop. better-sqlite3 is synchronous, so a checkpoint on the main
 * connection (SQLite's automatic one inside a commit, or a timer) makes every in-flight request wait
 * for its fsync. Here a worker thread owns a second connection to the same file and runs
 * `wal_checkpoint(PASSIVE)` on a timer: PASSIVE never waits for (or blocks) the main connection's
 * writes, and the fsync it does lands on the worker thread. The main connection runs with
 * `wal_autocheckpoint = 0`; the writer itself only rewinds the WAL once it is fully copied back,
 * and `journal_size_limit` bounds the file it leaves behind.
 *
 * The worker is plain JavaScript (eval), so it runs the same under tsc output, tsx and vitest;
 * the driver's resolved path comes from this module, not from the worker's working directory.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 50');
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: the next tick tries again */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage('closed');
});
`;

export class WalCheckpointer {
  private readonly worker: Worker;

  constructor(path: string, intervalMs: number) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, driver, intervalMs },
      // The thread only runs one pragma a second: a small heap keeps its RSS at ~10 MB.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
    });
    // A failing checkpointer must not take the gateway down: the WAL only grows until restart.
    this.worker.on('error', () => {});
    this.worker.unref();
  }

  /** Runs a last checkpoint on the worker, closes its connection and ends the thread. */
  async stop(): Promise<void> {
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
