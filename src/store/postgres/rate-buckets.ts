/**
 * Token buckets on PostgreSQL (limits/limiter.ts), shared by every replica: the row is created if
 * missing, then locked (FOR UPDATE), so concurrent takes on one bucket queue on its row and each
 * sees the previous one's result; the rule itself is the shared pure function.
 */
import { type BucketSize, type Limiter, type TakeResult, takeFromBucket } from '../../limits/limiter.js';
import type { Row } from '../rows.js';
import type { PgTransaction } from './transaction.js';

export class PostgresRateBuckets implements Limiter {
  constructor(private readonly transaction: PgTransaction) {}

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    return this.transaction(async (client) => {
      await client.query(
        'INSERT INTO rate_buckets (bucket_key, tokens, updated_ms) VALUES ($1, $2, $3) ON CONFLICT (bucket_key) DO NOTHING',
        [bucketKey, size.burst, nowMs],
      );
      const row = (
        await client.query<Row>(
          'SELECT tokens, updated_ms FROM rate_buckets WHERE bucket_key = $1 FOR UPDATE',
          [bucketKey],
        )
      ).rows[0]!;
      const { state, result } = takeFromBucket(
        { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) },
        units,
        size,
        nowMs,
      );
      await client.query('UPDATE rate_buckets SET tokens = $2, updated_ms = $3 WHERE bucket_key = $1', [
        bucketKey,
        state.tokens,
        state.updatedMs,
      ]);
      return result;
    });
  }
}
