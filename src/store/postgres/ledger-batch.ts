/**
 * The ledger on PostgreSQL, batched (group-commit.ts): one transaction admits or settles every call
 * that queued meanwhile, whatever Runs they belong to. The common batch is written in one statement
 * first (ledger-at-once.ts); this is the path for the batches it declines (several Runs, a spend
 * cap, a Run without room for the whole batch) and for the attempts it leaves (admitted on cap
 * counters), and it decides call by call.
 * Its statements are the ledger's only ones outside migration 9's functions: a single call in its
 * own transaction, the reaper and the reservations in doubt write through them too (ledger.ts).
 *
 * Reservations (5 statements per batch, including BEGIN and COMMIT and the read of the keys' caps;
 * 3 more when some reservation has a cap):
 *   SELECT the batch's Runs FOR UPDATE in id order (so two replicas' batches never deadlock), decide
 *   each reservation in arrival order against the locked row plus what this batch already admitted
 *   (the rule of the conditional UPDATE of ledger-at-once.ts: active, not expired,
 *   committed + reserved + amount <= budget), then one statement that updates the Runs and
 *   inserts the admitted attempts. The decision is made while the row lock is held, so it is exact across
 *   replicas; the CHECK runs_within_budget still backs it up.
 * Settlements (5 statements per batch when its attempts share one Run, 6 when they span several;
 *   3 more when some attempt was admitted on cap counters): lock the attempts (FOR UPDATE, id order;
 *   an attempt that is no longer 'reserved' is left alone: settleLocked), lock their Runs in id
 *   order (one Run: its UPDATE's lock), then one UPDATE of the Runs and one statement that updates
 *   the attempts and inserts their audit entries.
 * Spend caps (caps.ts, issue 13): after the Runs, every counter the batch can touch is created if
 *   missing and locked FOR UPDATE in counterOrder; each reservation is admitted only if it fits its
 *   Run AND every counter (as locked plus what the batch already took), in arrival order, and
 *   records its counters in attempts.cap_counters; settlement releases/commits on those recorded
 *   counters, last.
 * Lock order as everywhere else: attempts, then Runs (ascending id), then spend counters.
 */
import type pg from 'pg';
import { isoTime } from '../../lib/clock.js';
import { type CounterKey, counterKeys, recordedCounters } from '../../money/spend-caps.js';
import { counterSettlements } from '../cap-tally.js';
import type { ReserveInput, SettleInput } from '../port.js';
import { type Row, runFromRow } from '../rows.js';
import { reserveFailure, settlementAmounts } from '../rules.js';
import { addReservationsIn, prepareCapsIn, settleCountersIn } from './caps.js';
import type { BatchOutcome } from './group-commit.js';
import {
  ATTEMPT_COLUMNS,
  AUDIT_COLUMNS,
  AUDIT_RUN_COLUMNS,
  AUDIT_RUN_JOIN,
  attemptColumns,
  attributionColumns,
  firstByte,
} from './ledger-columns.js';

/** A JSONB column read back (an object) as the text a `::jsonb` cast takes again; null stays null. */
const jsonText = (value: unknown): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);

const sortedUnique = (values: Array<string | null>): string[] =>
  [...new Set(values.filter((value): value is string => value !== null))].sort();

export async function reserveBatch(client: pg.PoolClient, inputs: ReserveInput[]): Promise<BatchOutcome[]> {
  const runIds = sortedUnique(inputs.map((input) => input.runId));
  const locked = new Map<string, Row>();
  if (runIds.length > 0) {
    const rows = await client.query<Row>(
      'SELECT * FROM runs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
      [runIds],
    );
    for (const row of rows.rows) locked.set(String(row.id), row);
  }
  // Counters after the Runs (lock order: attempts, Runs, counters), all locked before any decision.
  const caps = await prepareCapsIn(client, inputs);
  const added = new Map<string, number>();
  const admitted: ReserveInput[] = [];
  const capCounters: Array<CounterKey[] | null> = [];
  const outcomes: BatchOutcome[] = inputs.map((input, index) => {
    const amount = input.reservationMicrosUsd;
    const counters = caps.counters[index] ?? [];
    const admit = (): BatchOutcome => {
      // The Run (when attached) fits: the caps decide next, against the locked counters plus what
      // this batch already took; a refusal leaves neither the Run nor any counter touched.
      const refusal = caps.tally.refusal(counters, amount);
      if (refusal) return { error: refusal };
      caps.tally.take(counters, amount);
      if (input.runId !== null) added.set(input.runId, (added.get(input.runId) ?? 0) + amount);
      admitted.push(input);
      capCounters.push(counters.length === 0 ? null : counterKeys(counters));
      return undefined;
    };
    if (input.runId === null) return admit();
    const row = locked.get(input.runId);
    const run = row && String(row.project_id) === input.projectId ? runFromRow(row) : undefined;
    const nowIso = isoTime(input.now);
    const already = added.get(input.runId) ?? 0;
    if (
      run &&
      run.status === 'active' &&
      run.expiresAt > nowIso &&
      run.committedMicrosUsd + run.reservedMicrosUsd + already + amount <= run.budgetMicrosUsd
    ) {
      return admit();
    }
    const current = run && { ...run, reservedMicrosUsd: run.reservedMicrosUsd + already };
    return { error: reserveFailure(current, nowIso, amount) };
  });
  await addReservationsIn(client, caps.tally.reservations());
  const runsUpdate = `UPDATE runs SET reserved = runs.reserved + d.amount
       FROM unnest($1::text[], $2::bigint[]) AS d(id, amount) WHERE runs.id = d.id`;
  const runsValues = [[...added.keys()], [...added.values()]];
  if (admitted.length === 0) {
    if (added.size > 0) await client.query(runsUpdate, runsValues);
    return outcomes;
  }
  // One statement: the Runs' reservations (a data-modifying WITH, run exactly once; no rows when
  // no reservation is on a Run) and the attempts.
  await client.query(
    `WITH reserved AS (${runsUpdate}) INSERT INTO attempts (${ATTEMPT_COLUMNS})
     SELECT id, project_id, key_id, run_id, 'reserved', reservation, lease_expires_at, owner, endpoint, alias,
       connection, profile, upstream_model, created_at, cap_counters::jsonb, call_id, tags::jsonb, route::jsonb, trace_id
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[], $9::text[],
       $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::timestamptz[], $16::text[],
       $17::text[], $18::text[], $19::text[], $20::text[])
       AS d(id, project_id, key_id, run_id, reservation, lease_expires_at, owner, endpoint, alias, connection,
         profile, upstream_model, created_at, cap_counters, call_id, tags, route, trace_id)`,
    [
      ...runsValues,
      ...attemptColumns(admitted),
      capCounters.map((counters) => (counters === null ? null : JSON.stringify(counters))),
      ...attributionColumns(admitted),
    ],
  );
  return outcomes;
}

/** An attempt being settled: its locked row, its settlement and what that commits. */
export interface Settling {
  input: SettleInput;
  attempt: Row;
  reservation: number;
  amounts: ReturnType<typeof settlementAmounts>;
}

export async function settleBatch(client: pg.PoolClient, inputs: SettleInput[]): Promise<BatchOutcome[]> {
  const attemptIds = sortedUnique(inputs.map((input) => input.attemptId));
  const found = await client.query<Row>(
    'SELECT * FROM attempts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
    [attemptIds],
  );
  await settleLocked(client, found.rows, inputs);
  return inputs.map(() => undefined);
}

/**
 * Settles `inputs` on attempt rows this transaction has locked (FOR UPDATE, in id order or the
 * reaper's run_id order): every settlement of every path (batch, single, reaper, in doubt) is
 * written by these statements. A row no longer 'reserved', an id not among the rows and the repeat
 * of an id are left alone. Returns what was settled, in the inputs' order.
 */
export async function settleLocked(
  client: pg.PoolClient,
  rows: readonly Row[],
  inputs: readonly SettleInput[],
): Promise<Settling[]> {
  const open = new Map(rows.filter((row) => row.state === 'reserved').map((row) => [String(row.id), row]));
  const settling: Settling[] = [];
  for (const input of inputs) {
    const attempt = open.get(input.attemptId);
    if (!attempt) continue; // unknown id, already settled, or settled earlier in this batch
    open.delete(input.attemptId);
    const reservation = Number(attempt.reservation);
    settling.push({
      input,
      attempt,
      reservation,
      amounts: settlementAmounts(input.state, reservation, input.costMicrosUsd),
    });
  }
  const perRun = new Map<string, { reserved: number; commit: number; overrun: number; unknown: number }>();
  for (const { attempt, reservation, amounts } of settling) {
    if (attempt.run_id === null) continue;
    const runId = String(attempt.run_id);
    const sum = perRun.get(runId) ?? { reserved: 0, commit: 0, overrun: 0, unknown: 0 };
    sum.reserved += reservation;
    sum.commit += amounts.commit;
    sum.overrun += amounts.overrun;
    sum.unknown += amounts.unknown;
    perRun.set(runId, sum);
  }
  if (perRun.size > 0) {
    const runIds = [...perRun.keys()].sort();
    // Several Runs: lock them in id order first (the UPDATE below locks in whatever order it
    // meets them). One Run: the UPDATE's own lock of its one row is the same lock.
    if (runIds.length > 1)
      await client.query('SELECT id FROM runs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [runIds]);
    const sums = runIds.map((id) => perRun.get(id)!);
    await client.query(
      `UPDATE runs SET reserved = runs.reserved - d.reserved, committed = runs.committed + d.commit,
         overrun = runs.overrun + d.overrun, unknown_attempts = runs.unknown_attempts + d.unknown
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::int[]) AS d(id, reserved, commit, overrun, unknown)
       WHERE runs.id = d.id`,
      [
        runIds,
        sums.map((sum) => sum.reserved),
        sums.map((sum) => sum.commit),
        sums.map((sum) => sum.overrun),
        sums.map((sum) => sum.unknown),
      ],
    );
  }
  if (settling.length > 0) {
    const column = <T>(read: (entry: Settling) => T) => settling.map(read);
    // One statement: the attempts' update (a data-modifying WITH runs exactly once, whether or not
    // the INSERT reads it) and their audit entries, in the batch's order.
    await client.query(
      `WITH settled AS (
         UPDATE attempts SET state = d.state, cost = d.cost, settled_at = d.settled_at, outcome = d.outcome
         FROM unnest($1::text[], $10::text[], $12::bigint[], $22::timestamptz[], $17::text[])
           AS d(id, state, cost, settled_at, outcome)
         WHERE attempts.id = d.id
       )
       INSERT INTO audit (${AUDIT_COLUMNS})
       SELECT s.attempt_id, s.project_id, s.key_id, s.run_id, s.endpoint, s.alias, s.connection, s.profile,
         s.upstream_model, s.state, s.reservation, s.cost, s.input_tokens, s.output_tokens,
         s.cache_creation_input_tokens, s.cache_read_input_tokens, s.outcome, s.http_status, s.duration_ms, s.overran,
         s.created_at, s.settled_at, ${AUDIT_RUN_COLUMNS}, s.call_id, s.tags::jsonb, s.route::jsonb, s.trace_id,
         s.first_byte_ms, s.upstream_request_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[],
         $16::bigint[], $17::text[], $18::int[], $19::bigint[], $20::boolean[], $21::timestamptz[], $22::timestamptz[],
         $23::text[], $24::text[], $25::text[], $26::text[], $27::bigint[], $28::text[])
         WITH ORDINALITY AS s(attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile,
           upstream_model, state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens,
           cache_read_input_tokens, outcome, http_status, duration_ms, overran, created_at, settled_at, call_id, tags,
           route, trace_id, first_byte_ms, upstream_request_id, position)
         ${AUDIT_RUN_JOIN}
       ORDER BY s.position`,
      [
        column((entry) => entry.input.attemptId),
        column((entry) => entry.attempt.project_id),
        column((entry) => entry.attempt.key_id),
        column((entry) => entry.attempt.run_id),
        column((entry) => entry.attempt.endpoint),
        column((entry) => entry.attempt.alias),
        column((entry) => entry.attempt.connection),
        column((entry) => entry.attempt.profile),
        column((entry) => entry.attempt.upstream_model),
        column((entry) => entry.input.state),
        column((entry) => entry.reservation),
        column((entry) => entry.amounts.commit),
        column((entry) => entry.input.usage?.inputTokens ?? null),
        column((entry) => entry.input.usage?.outputTokens ?? null),
        column((entry) => entry.input.usage?.cacheCreationInputTokens ?? null),
        column((entry) => entry.input.usage?.cacheReadInputTokens ?? null),
        column((entry) => entry.input.outcome),
        column((entry) => entry.input.httpStatus),
        column((entry) => Math.round(entry.input.durationMs)),
        column((entry) => entry.amounts.overrun > 0),
        column((entry) => entry.attempt.created_at),
        column((entry) => entry.input.settledAt),
        column((entry) => entry.attempt.call_id ?? null),
        column((entry) => jsonText(entry.attempt.tags)),
        column((entry) => jsonText(entry.attempt.route)),
        column((entry) => entry.attempt.trace_id ?? null),
        column((entry) => firstByte(entry.input)),
        column((entry) => entry.input.upstreamRequestId ?? null),
      ],
    );
  }
  // Counters last (after every Run), on exactly the counters each reservation was admitted on.
  await settleCountersIn(
    client,
    counterSettlements(
      settling.map(({ attempt, reservation, amounts }) => ({
        counters: recordedCounters(attempt.cap_counters),
        reservation,
        commit: amounts.commit,
      })),
    ),
  );
  return settling;
}
