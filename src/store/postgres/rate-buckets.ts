/**
 * Token buckets on PostgreSQL (limits/limiter.ts), shared by every replica: the rows are created if
 * missing, then locked (FOR UPDATE, in key order so two multi-bucket takes never deadlock), so
 * concurrent takes on one bucket queue on its row and each sees the previous one's result; the
 * rule itself is the shared pure function.
 */

import type pg from 'pg';
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
import type { PgTransaction } from './transaction.js';

type Client = pg.PoolClient;

/** Locks the buckets (created full when missing) and reads their states, keyed by bucket key. */
async function lockBuckets(
  client: Client,
  keys: readonly { bucketKey: string; burst: number }[],
  nowMs: number,
): Promise<Map<string, BucketState>> {
  const sorted = [...keys].sort((a, b) => (a.bucketKey < b.bucketKey ? -1 : 1));
  await client.query(
    `INSERT INTO rate_buckets (bucket_key, tokens, updated_ms)
     SELECT key, tokens, $3 FROM unnest($1::text[], $2::float8[]) AS bucket(key, tokens)
     ON CONFLICT (bucket_key) DO NOTHING`,
    [sorted.map((key) => key.bucketKey), sorted.map((key) => key.burst), nowMs],
  );
  const rows = (
    await client.query<Row>(
      'SELECT bucket_key, tokens, updated_ms FROM rate_buckets WHERE bucket_key = ANY($1::text[]) ORDER BY bucket_key FOR UPDATE',
      [sorted.map((key) => key.bucketKey)],
    )
  ).rows;
  return new Map(
    rows.map((row) => [
      String(row.bucket_key),
      { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) },
    ]),
  );
}

async function writeBucket(client: Client, bucketKey: string, state: BucketState): Promise<void> {
  await client.query('UPDATE rate_buckets SET tokens = $2, updated_ms = $3 WHERE bucket_key = $1', [
    bucketKey,
    state.tokens,
    state.updatedMs,
  ]);
}

export class PostgresRateBuckets implements Limiter {
  constructor(private readonly transaction: PgTransaction) {}

  async take(bucketKey: string, units: number, size: BucketSize, nowMs: number): Promise<TakeResult> {
    return this.transaction(async (client) => {
      const states = await lockBuckets(client, [{ bucketKey, burst: size.burst }], nowMs);
      const { state, result } = takeFromBucket(states.get(bucketKey), units, size, nowMs);
      await writeBucket(client, bucketKey, state);
      return result;
    });
  }

  async takeAll(takes: readonly BucketTake[], nowMs: number): Promise<MultiTakeResult> {
    return this.transaction(async (client) => {
      const locked = await lockBuckets(
        client,
        takes.map((take) => ({ bucketKey: take.bucketKey, burst: take.size.burst })),
        nowMs,
      );
      const { states, result } = takeFromBuckets(
        takes.map((take) => locked.get(take.bucketKey)),
        takes,
        nowMs,
      );
      await client.query(
        `UPDATE rate_buckets SET tokens = bucket.tokens, updated_ms = bucket.updated_ms
         FROM unnest($1::text[], $2::float8[], $3::bigint[]) AS bucket(key, tokens, updated_ms)
         WHERE rate_buckets.bucket_key = bucket.key`,
        [
          takes.map((take) => take.bucketKey),
          states.map((state) => state.tokens),
          states.map((state) => state.updatedMs),
        ],
      );
      return result;
    });
  }

  async adjustAll(adjustments: readonly BucketTake[], nowMs: number): Promise<void> {
    await this.transaction(async (client) => {
      const locked = await lockBuckets(
        client,
        adjustments.map((adjustment) => ({ bucketKey: adjustment.bucketKey, burst: adjustment.size.burst })),
        nowMs,
      );
      for (const { bucketKey, units, size } of adjustments)
        await writeBucket(client, bucketKey, adjustBucket(locked.get(bucketKey), units, size, nowMs));
    });
  }
}
