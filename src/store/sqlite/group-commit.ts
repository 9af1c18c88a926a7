/**
 * Group commit for the SQLite ledger's hot path: reservations and settlements arriving in the same
 * turn of the event loop run in ONE transaction, in arrival order. Each conditional update still sees
 * the effect of the ones before it, so admission stays exact; an item refused by a rule (budget,
 * closed Run) has written nothing; every promise resolves after the commit.
 *
 * A write arriving alone (the first of its turn, and the last turn had a single write: the process
 * is not under concurrent load) commits at once instead of waiting a turn, so a call at
 * concurrency 1 does not pay the hop; the writes that follow it in the same turn still wait for
 * the turn's flush, and once a turn has seen two or more, every write of the next waits for it:
 * under load each turn commits as one group.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type { WalCheckpointer } from './checkpointer.js';
import type { SqliteTransaction } from './transaction.js';

interface Queued {
  work: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class SqliteGroupCommit {
  private readonly queue: Queued[] = [];
  /** A flush is scheduled for this turn of the event loop. */
  private turnScheduled = false;
  /** Writes of the current turn, and of the last one (one alone: the next commits at once). */
  private turnWrites = 0;
  private lastTurnWrites = 0;

  constructor(
    private readonly transaction: SqliteTransaction,
    /** The checkpoint worker, while it runs (its lock keeps a commit off a WAL rewind). */
    private readonly checkpointer: () => WalCheckpointer | undefined,
    /** Wraps each batch's transaction (the ledger scopes its per-batch reads to it). */
    private readonly perBatch: (commit: () => void) => void,
  ) {}

  submit(work: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ work, resolve, reject });
      this.turnWrites++;
      if (this.turnScheduled) return;
      this.turnScheduled = true;
      setImmediate(() => {
        this.turnScheduled = false;
        this.lastTurnWrites = this.turnWrites;
        this.turnWrites = 0;
        this.flush();
      });
      if (this.lastTurnWrites <= 1) this.flush();
    });
  }

  private flush(): void {
    if (this.queue.length === 0) return;
    // The checkpoint worker is rewinding the WAL (a write that fsyncs): commit a moment later
    // rather than wait for it in SQLite's busy handler, which would stall the event loop.
    const checkpointer = this.checkpointer();
    if (checkpointer && !checkpointer.tryHold()) {
      setTimeout(() => this.flush(), 1);
      return;
    }
    try {
      this.commitBatch();
    } finally {
      checkpointer?.release();
    }
  }

  private commitBatch(): void {
    const batch = this.queue.splice(0);
    const failures = new Map<number, unknown>();
    try {
      this.perBatch(() =>
        this.transaction(() => {
          batch.forEach((item, index) => {
            // An item refused with a GatewayError has written nothing (every ledger write decides
            // before it writes), so it needs no savepoint; any other error aborts the whole batch.
            try {
              item.work();
            } catch (error) {
              if (!(error instanceof GatewayError)) throw error;
              failures.set(index, error);
            }
          });
        }),
      );
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      if (failures.has(index)) item.reject(failures.get(index));
      else item.resolve();
    });
  }
}
