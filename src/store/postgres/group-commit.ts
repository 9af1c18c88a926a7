/**
 * Group commit: calls that arrive while a batch is being written wait and go together in the next
 * one, so one hot Run takes one row lock and one commit per batch instead of one per call. Items
 * keep their arrival order inside a batch; each item gets its own result (a refused reservation
 * does not fail its neighbours).
 */
export type BatchOutcome = undefined | { error: unknown };

interface Pending<I> {
  item: I;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I> {
  private queue: Array<Pending<I>> = [];
  private inFlight = 0;

  /**
   * `write` commits a batch and returns one outcome per item (same order), or throws for the
   * whole batch. `maxInFlight` batches may be written at once; `maxBatch` bounds one batch.
   */
  constructor(
    private readonly write: (items: I[]) => Promise<BatchOutcome[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.flush(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async flush(batch: Array<Pending<I>>): Promise<void> {
    try {
      const outcomes = await this.write(batch.map((pending) => pending.item));
      batch.forEach((pending, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) pending.resolve();
        else pending.reject(outcome.error);
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}
