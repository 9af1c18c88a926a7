/** Token buckets on SQLite (limits/limiter.ts): read, apply the rule, write, in one immediate transaction. */
import type Database from 'better-sqlite3';
import {
  adjustBucket,
  type BucketSize,
  type BucketState,
  type BucketTake,
  type Limiter,
  type MultiTakeResult,
  type TakeResult,
  takeFromBucket,
  takeFromBuckets,
} from '../../limits/limiter.js';
import type { Row } from '../rows.js';

export class SqliteRateBuckets implements Limiter {
  private statements:
    | { select: Database.Statement<[string]>; upsert: Database.Statement<[string, number, number]> }
    | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly tx: <T>(work: () => T) => T,
  ) {}

  /** Prepared once, on first use (after the migrations created the table). */
  private get prepared() {
    this.statements ??= {
      select: this.db.prepare('SELECT tokens, updated_ms FROM rate_buckets WHERE bucket_key = ?'),
      upsert: this.db.prepare(
        `INSERT INTO rate_buckets (bucket_key, tokens, updated_ms) VALUES (?, ?, ?)
         ON CONFLICT (bucket_key) DO UPDATE SET tokens = excluded.tokens, updated_ms = excluded.updated_ms`,
      ),
    };
    return this.statements;
  }

  private read(bucketKey: string): BucketState | undefined {
    const row = this.prepared.select.get(bucketKey) as Row | undefined;
    return row ? { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) } : undefined;
  }

  private write(bucketKey: string, state: BucketState): void {
    this.prepared.upsert.run(bucketKey, state.tokens, state.updatedMs);
  }

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    return this.tx(() => {
      const { state, result } = takeFromBucket(this.read(bucketKey), units, size, nowMs);
      this.write(bucketKey, state);
      return result;
    });
  }

  async takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult> {
    return this.tx(() => {
      const { states, result } = takeFromBuckets(
        takes.map((take) => this.read(take.bucketKey)),
        takes,
        nowMs,
      );
      for (const [index, take] of takes.entries()) this.write(take.bucketKey, states[index]!);
      return result;
    });
  }

  async adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void> {
    this.tx(() => {
      for (const { bucketKey, units, size } of adjustments)
        this.write(bucketKey, adjustBucket(this.read(bucketKey), units, size, nowMs));
    });
  }
}
