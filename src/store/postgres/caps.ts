/**
 * Spend caps on PostgreSQL (ledger/spend-caps.ts), inside the reservation's READ COMMITTED
 * transaction. Each counter is admitted by ONE conditional UPDATE (`committed + reserved + amount
 * <= limit`): concurrent reservations from any replica queue on the counter's row lock and
 * PostgreSQL re-checks the condition against the committed row, exactly as for a Run. A refusal
 * throws, which rolls back the whole transaction (the Run's reservation and earlier counters
 * included). Counters are locked in lockOrder() after the Run, settlement releases them after the
 * Run too, so lock order is always attempt, Run, counters.
 */
import type pg from 'pg';
import { type CapCounter, type CounterKey, capRefusal, type SpendCaps } from '../../ledger/spend-caps.js';
import type { Row } from '../rows.js';

type Client = pg.PoolClient;

export async function keyCapsIn(client: Client, keyId: string): Promise<SpendCaps> {
  const row = (await client.query<Row>('SELECT limits FROM gateway_keys WHERE id = $1', [keyId])).rows[0];
  return (row?.limits as SpendCaps | null | undefined) ?? {};
}

export async function reserveCapsIn(
  client: Client,
  counters: readonly CapCounter[],
  amount: number,
): Promise<void> {
  for (const counter of counters) {
    const key = [counter.scope, counter.ownerId, counter.period];
    await client.query(
      'INSERT INTO spend_counters (scope, owner_id, period) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      key,
    );
    const admitted = await client.query(
      `UPDATE spend_counters SET reserved = reserved + $4
       WHERE scope = $1 AND owner_id = $2 AND period = $3 AND committed + reserved + $4 <= $5 RETURNING 1`,
      [...key, amount, counter.limitMicrosUsd],
    );
    if (admitted.rowCount === 1) continue;
    const row = (
      await client.query<Row>(
        'SELECT committed, reserved FROM spend_counters WHERE scope = $1 AND owner_id = $2 AND period = $3',
        key,
      )
    ).rows[0];
    throw capRefusal(
      counter,
      { committed: Number(row?.committed ?? 0), reserved: Number(row?.reserved ?? 0) },
      amount,
    );
  }
}

export async function settleCapsIn(
  client: Client,
  counters: readonly CounterKey[],
  reservation: number,
  commit: number,
): Promise<void> {
  for (const counter of counters) {
    await client.query(
      `UPDATE spend_counters SET reserved = reserved - $4, committed = committed + $5
       WHERE scope = $1 AND owner_id = $2 AND period = $3`,
      [counter.scope, counter.ownerId, counter.period, reservation, commit],
    );
  }
}
