/**
 * Spend caps on PostgreSQL (money/spend-caps.ts, store/cap-tally.ts), inside the ledger's READ
 * COMMITTED transaction, after the Run:
 * 1. the counter rows are created if missing (INSERT ... ON CONFLICT DO NOTHING, in counterOrder);
 * 2. they are locked with SELECT ... FOR UPDATE in counterOrder (COLLATE "C"), so concurrent
 *    reservations from any replica queue on them and every transaction locks them in one order;
 * 3. the decision is taken while the locks are held (CapTally: committed + reserved + amount <=
 *    limit for every counter), and only then written: never read-decide-write outside a row lock.
 * Settlement locks the same way and applies the per-counter sums. Lock order everywhere: attempts,
 * Runs, then counters. A batch of reservations can use the same three steps for the whole batch.
 */
import type pg from 'pg';
import {
  type CapCounter,
  type CounterKey,
  reservationCounters,
  type SpendCaps,
} from '../../money/spend-caps.js';
import {
  CapTally,
  type CounterSettlement,
  type CounterUsage,
  counterId,
  counterOrder,
} from '../cap-tally.js';
import type { ReserveInput } from '../port.js';
import type { Row } from '../rows.js';

type Client = pg.PoolClient;

const ORDER = 'ORDER BY scope COLLATE "C", owner_id COLLATE "C", period COLLATE "C"';

function columns(counters: readonly CounterKey[]): [string[], string[], string[]] {
  return [
    counters.map((counter) => counter.scope),
    counters.map((counter) => counter.ownerId),
    counters.map((counter) => counter.period),
  ];
}

/** The caps stored on each key (keys without caps are absent). */
export async function keyCapsIn(client: Client, keyIds: readonly string[]): Promise<Map<string, SpendCaps>> {
  const result = await client.query<Row>(
    'SELECT id, limits FROM gateway_keys WHERE id = ANY($1::text[]) AND limits IS NOT NULL',
    [[...new Set(keyIds)]],
  );
  return new Map(result.rows.map((row) => [String(row.id), row.limits as SpendCaps]));
}

/** Creates missing counters and locks them all, in counterOrder; returns their current usage. */
export async function lockCountersIn(
  client: Client,
  counters: readonly CounterKey[],
): Promise<Map<string, CounterUsage>> {
  const ordered = counterOrder(counters);
  if (ordered.length === 0) return new Map();
  const values = columns(ordered);
  await client.query(
    `INSERT INTO spend_counters (scope, owner_id, period)
     SELECT scope, owner_id, period FROM unnest($1::text[], $2::text[], $3::text[]) AS d(scope, owner_id, period)
     ${ORDER} ON CONFLICT DO NOTHING`,
    values,
  );
  const locked = await client.query<Row>(
    `SELECT scope, owner_id, period, committed, reserved FROM spend_counters
     WHERE (scope, owner_id, period) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
     ${ORDER} FOR UPDATE`,
    values,
  );
  return new Map(
    locked.rows.map((row) => [
      counterId({
        scope: row.scope as CounterKey['scope'],
        ownerId: String(row.owner_id),
        period: String(row.period),
      }),
      { committed: Number(row.committed), reserved: Number(row.reserved) },
    ]),
  );
}

/** Adds admitted reservations to counters this transaction has locked. */
export async function addReservationsIn(
  client: Client,
  reservations: ReadonlyArray<{ counter: CounterKey; amount: number }>,
): Promise<void> {
  if (reservations.length === 0) return;
  await client.query(
    `UPDATE spend_counters SET reserved = spend_counters.reserved + d.amount
     FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS d(scope, owner_id, period, amount)
     WHERE spend_counters.scope = d.scope AND spend_counters.owner_id = d.owner_id AND spend_counters.period = d.period`,
    [...columns(reservations.map((entry) => entry.counter)), reservations.map((entry) => entry.amount)],
  );
}

/** Locks the counters (counterOrder) and releases/commits the summed settlements on them. */
export async function settleCountersIn(
  client: Client,
  settlements: readonly CounterSettlement[],
): Promise<void> {
  if (settlements.length === 0) return;
  await lockCountersIn(
    client,
    settlements.map((settlement) => settlement.counter),
  );
  await client.query(
    `UPDATE spend_counters SET reserved = spend_counters.reserved - d.released,
       committed = spend_counters.committed + d.committed
     FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
       AS d(scope, owner_id, period, released, committed)
     WHERE spend_counters.scope = d.scope AND spend_counters.owner_id = d.owner_id AND spend_counters.period = d.period`,
    [
      ...columns(settlements.map((settlement) => settlement.counter)),
      settlements.map((settlement) => settlement.released),
      settlements.map((settlement) => settlement.committed),
    ],
  );
}

/**
 * The caps of a batch of reservations (one or many, in arrival order): reads the keys' caps, locks
 * every counter the batch can touch, and returns the tally to decide each reservation with (after
 * its Run) plus each reservation's counters, in refusal order.
 */
export async function prepareCapsIn(
  client: Client,
  inputs: readonly ReserveInput[],
): Promise<{ tally: CapTally; counters: CapCounter[][] }> {
  const keyCaps = await keyCapsIn(
    client,
    inputs.map((input) => input.keyId),
  );
  const counters = inputs.map((input) =>
    reservationCounters(input.projectId, input.projectCaps, input.keyId, keyCaps.get(input.keyId), input.now),
  );
  const all = counters.flat();
  return { tally: new CapTally(all.length === 0 ? new Map() : await lockCountersIn(client, all)), counters };
}
