/** Token buckets on SQLite (limits/limiter.ts): read, apply the rule, write, in one immediate transaction. */
import type Database from 'better-sqlite3';
import { type BucketSize, type Limiter, type TakeResult, takeFromBucket } from '../../limits/limiter.js';
import type { Row } from '../rows.js';

export class SqliteRateBuckets implements Limiter {
  constructor(
    private readonly db: Database.Database,
    private readonly tx: <T>(work: () => T) => T,
  ) {}

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    return this.tx(() => {
      const row = this.db
        .prepare('SELECT tokens, updated_ms FROM rate_buckets WHERE bucket_key = ?')
        .get(bucketKey) as Row | undefined;
      const { state, result } = takeFromBucket(
        row ? { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) } : undefined,
        units,
        size,
        nowMs,
      );
      this.db
        .prepare(
          `INSERT INTO rate_buckets (bucket_key, tokens, updated_ms) VALUES (?, ?, ?)
           ON CONFLICT (bucket_key) DO UPDATE SET tokens = excluded.tokens, updated_ms = excluded.updated_ms`,
        )
        .run(bucketKey, state.tokens, state.updatedMs);
      return result;
    });
  }
}
