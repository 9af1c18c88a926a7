import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, describePostgres, type TestDatabase } from '../../../test/support/postgres.js';
import { newId } from '../../lib/ids.js';
import type { SpendCaps } from '../../money/spend-caps.js';
import {
  codeOf,
  completedSettlement,
  createActiveRun,
  createKey,
  plainReservation,
} from '../contract/harness.js';
import type { ReserveInput } from '../port.js';
import { settlementAmounts, settlementAmountsSql } from '../rules.js';
import { type Query, reserveAtOnce, settleAtOnce } from './ledger-at-once.js';
import { LEDGER_FUNCTION_SETTINGS, SETTLE_AT_ONCE } from './migration-ledger-functions.js';
import { PostgresStore } from './postgres-store.js';

const PROJECT = 'prj_a';
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

describePostgres('ledger in one statement (PostgreSQL)', () => {
  let database: TestDatabase;
  let store: PostgresStore;
  let pool: pg.Pool;
  let query: Query;
  beforeEach(async () => {
    database = await createTestDatabase();
    store = new PostgresStore({ connectionString: database.url });
    await store.migrate();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    query = (text, values) => pool.query(text, values);
  });
  afterEach(async () => {
    await pool.end();
    await store.close();
    await database.drop();
  });

  const run = (budget: number, projectId = PROJECT) =>
    createActiveRun(store, projectId, budget, iso(Date.now()), iso(Date.now() + DAY));
  const on = (runId: string | null, amount: number, fields: Partial<ReserveInput> = {}) =>
    plainReservation(newId('att'), { runId, reservationMicrosUsd: amount, ...fields });

  async function runRow(id: string) {
    const { rows } = await pool.query(
      'SELECT reserved::int, committed::int, overrun::int, unknown_attempts FROM runs WHERE id = $1',
      [id],
    );
    return rows[0];
  }
  async function attemptIds(): Promise<string[]> {
    return (await pool.query('SELECT id FROM attempts ORDER BY id')).rows.map((row) => String(row.id));
  }
  const key = (limits: SpendCaps) => createKey(store, PROJECT, limits, iso(Date.now()));

  describe('reserveAtOnce', () => {
    it('admits a whole one-Run batch, or writes nothing when the Run has no room for all of it', async () => {
      const runId = await run(1000);
      const admitted = [on(runId, 400), on(null, 7), on(runId, 500)];
      expect(await reserveAtOnce(query, admitted)).toBe(true);
      expect(await runRow(runId)).toMatchObject({ reserved: 900, committed: 0 });
      const { rows } = await pool.query(
        "SELECT count(*)::int AS n FROM attempts WHERE state = 'reserved' AND cap_counters IS NULL",
      );
      expect(rows[0].n).toBe(3);

      // 50 fits, 60 on top of it does not: the batch as a whole is declined and nothing is written.
      const declined = [on(runId, 50), on(runId, 60)];
      expect(await reserveAtOnce(query, declined)).toBe(false);
      expect(await runRow(runId)).toMatchObject({ reserved: 900 });
      expect(await attemptIds()).toEqual(admitted.map((input) => input.attemptId).sort());
    });

    it('declines every batch the call-by-call path must decide, and writes nothing', async () => {
      const runId = await run(1000);
      const other = await run(1000);
      const foreign = await run(1000, 'prj_b');
      const closed = await run(1000);
      await pool.query("UPDATE runs SET status = 'closed' WHERE id = $1", [closed]);
      const capped = await key({ dayMicrosUsd: 10_000 });
      const batches: Array<[string, ReserveInput[]]> = [
        ['two Runs', [on(runId, 1), on(other, 1)]],
        ['two projects on one Run', [on(runId, 1), on(runId, 1, { projectId: 'prj_b' })]],
        ['a Run of another project', [on(foreign, 1)]],
        ['a closed Run', [on(closed, 1)]],
        ['an expired Run', [on(runId, 1, { now: Date.now() + 2 * DAY })]],
        ['a Project cap', [on(runId, 1, { projectCaps: { lifetimeMicrosUsd: 10_000 } })]],
        ['a capped key', [on(runId, 1), on(null, 1, { keyId: capped })]],
      ];
      for (const [, inputs] of batches) expect(await reserveAtOnce(query, inputs)).toBe(false);
      expect(await attemptIds()).toEqual([]);
      for (const id of [runId, other, foreign, closed])
        expect(await runRow(id)).toMatchObject({ reserved: 0 });
    });

    it('admits the calls of a managed key without caps', async () => {
      const runId = await run(1000);
      const uncapped = await key({});
      expect(await reserveAtOnce(query, [on(runId, 10, { keyId: uncapped })])).toBe(true);
      expect(await runRow(runId)).toMatchObject({ reserved: 10 });
    });

    it('leaves a declined batch to the store, which decides each call in arrival order', async () => {
      const runId = await run(1000);
      // The first call is a batch of its own; the next three queue behind it and are one batch, which
      // does not fit as a whole (700 + 300 + 301 > 600 left): 700 is refused, 300 after it still fits.
      const codes = await Promise.all(
        [400, 700, 300, 301].map((amount) => codeOf(store.reserve(on(runId, amount)))),
      );
      expect(codes).toEqual(['ok', 'run_budget_exceeded', 'ok', 'run_budget_exceeded']);
      expect(await runRow(runId)).toMatchObject({ reserved: 700 });
    });
  });

  it('tells onLedgerFallback when a batch fails as one statement on its data, then writes it item by item', async () => {
    const told: Array<{ lane: string; error: unknown }> = [];
    const telling = new PostgresStore({
      connectionString: database.url,
      onLedgerFallback: (lane, error) => told.push({ lane, error }),
    });
    try {
      const runId = await run(1000);
      const first = on(runId, 10);
      await telling.reserve(first);
      expect(told).toEqual([]);
      // The same attempt id again: its INSERT fails on the primary key, as one statement and alone.
      await expect(telling.reserve({ ...first, reservationMicrosUsd: 20 })).rejects.toThrow();
      expect(told.map(({ lane }) => lane)).toEqual(['reserve']);
      expect(String(told[0]?.error)).toMatch(/duplicate key|attempts_pkey/);
      expect(await runRow(runId)).toMatchObject({ reserved: 10 });
    } finally {
      await telling.close();
    }
  });

  it('writes a failed batch call by call: the bad call is refused, its neighbour admitted on the Run', async () => {
    const runId = await run(1000);
    const first = on(runId, 10);
    await store.reserve(first);
    // The first of the turn goes alone; the next two queue behind it and form one batch, which
    // fails as a whole on the repeated id and is then written one call per transaction.
    const blocker = store.reserve(on(runId, 1));
    const repeated = store.reserve({ ...first, reservationMicrosUsd: 20 });
    const neighbour = on(runId, 100);
    const admitted = store.reserve(neighbour);
    await blocker;
    await expect(repeated).rejects.toThrow();
    await admitted;
    expect(await runRow(runId)).toMatchObject({ reserved: 111 });
    expect(await attemptIds()).toContain(neighbour.attemptId);
    // A call the Run has no room for is refused by name on that path too.
    const blocked = store.reserve(on(runId, 1));
    const repeatedAgain = store.reserve({ ...first, reservationMicrosUsd: 20 });
    const tooBig = store.reserve(on(runId, 10_000));
    await blocked;
    await expect(repeatedAgain).rejects.toThrow();
    await expect(tooBig).rejects.toMatchObject({ code: 'run_budget_exceeded' });
    expect(await runRow(runId)).toMatchObject({ reserved: 112 });
  });

  describe('settleAtOnce', () => {
    it('settles, commits and audits a batch once, in its order; a repeated or settled attempt is left alone', async () => {
      const runId = await run(10_000);
      const [a, b, c, d] = [on(runId, 100), on(runId, 200), on(runId, 300), on(runId, 100)];
      expect(await reserveAtOnce(query, [a, b, c, d])).toBe(true);
      const settled = await settleAtOnce(query, [
        completedSettlement(c.attemptId, { state: 'released', costMicrosUsd: 0, outcome: 'not_sent' }),
        completedSettlement(a.attemptId, { costMicrosUsd: 40 }),
        completedSettlement(b.attemptId, { state: 'unknown', costMicrosUsd: 0, outcome: 'unknown' }),
        completedSettlement(d.attemptId, { costMicrosUsd: 130 }),
        completedSettlement(a.attemptId, { costMicrosUsd: 99 }),
        completedSettlement('att_unknown'),
      ]);
      expect([...settled].sort()).toEqual([a, b, c, d].map((input) => input.attemptId).sort());
      // a: 40; b: unknown commits its reservation (200); c: released; d: 130 on 100 reserved (30 over).
      expect(await runRow(runId)).toEqual({ reserved: 0, committed: 370, overrun: 30, unknown_attempts: 1 });
      const audit = await pool.query(
        'SELECT attempt_id, state, reservation::int, cost::int, overran, input_tokens::int FROM audit ORDER BY sequence',
      );
      expect(audit.rows).toEqual([
        {
          attempt_id: c.attemptId,
          state: 'released',
          reservation: 300,
          cost: 0,
          overran: false,
          input_tokens: 1,
        },
        {
          attempt_id: a.attemptId,
          state: 'settled',
          reservation: 100,
          cost: 40,
          overran: false,
          input_tokens: 1,
        },
        {
          attempt_id: b.attemptId,
          state: 'unknown',
          reservation: 200,
          cost: 200,
          overran: false,
          input_tokens: 1,
        },
        {
          attempt_id: d.attemptId,
          state: 'settled',
          reservation: 100,
          cost: 130,
          overran: true,
          input_tokens: 1,
        },
      ]);
      const states = await pool.query('SELECT id, state, cost::int FROM attempts WHERE id = $1', [
        a.attemptId,
      ]);
      expect(states.rows[0]).toEqual({ id: a.attemptId, state: 'settled', cost: 40 });

      expect((await settleAtOnce(query, [completedSettlement(a.attemptId, { costMicrosUsd: 5 })])).size).toBe(
        0,
      );
      expect(await runRow(runId)).toEqual({ reserved: 0, committed: 370, overrun: 30, unknown_attempts: 1 });
      expect((await pool.query('SELECT count(*)::int AS n FROM audit')).rows[0].n).toBe(4);
    });

    it('settles attempts of several Runs, and leaves one admitted on cap counters to the store', async () => {
      const first = await run(1000);
      const second = await run(1000);
      const capped = await key({ dayMicrosUsd: 1000 });
      const plain = [on(first, 100), on(second, 200)];
      for (const input of plain) await store.reserve(input);
      const onCounters = on(first, 300, { keyId: capped });
      await store.reserve(onCounters);

      const settled = await settleAtOnce(query, [
        completedSettlement(onCounters.attemptId, { costMicrosUsd: 30 }),
        ...plain.map((input) => completedSettlement(input.attemptId, { costMicrosUsd: 10 })),
      ]);
      expect([...settled].sort()).toEqual(plain.map((input) => input.attemptId).sort());
      expect(await runRow(first)).toMatchObject({ reserved: 300, committed: 10 });
      expect(await runRow(second)).toMatchObject({ reserved: 0, committed: 10 });
      const counter = async () =>
        (await pool.query("SELECT reserved::int, committed::int FROM spend_counters WHERE scope = 'key'"))
          .rows[0];
      expect(await counter()).toEqual({ reserved: 300, committed: 0 });

      // Through the store the capped attempt takes the transaction path and releases its counter.
      await store.settle(completedSettlement(onCounters.attemptId, { costMicrosUsd: 30 }));
      expect(await runRow(first)).toMatchObject({ reserved: 0, committed: 40 });
      expect(await counter()).toEqual({ reserved: 0, committed: 30 });
    });
  });

  /**
   * The plan svc_settle_at_once runs: its statement prepared under the function's own settings,
   * with the generic plan the function keeps for the life of a connection.
   */
  async function settlementPlan(): Promise<string> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const [name, value] of LEDGER_FUNCTION_SETTINGS)
        await client.query(`SET LOCAL ${name} = ${value}`);
      await client.query(
        `PREPARE settle_batch(${SETTLE_AT_ONCE.parameters}) AS ${SETTLE_AT_ONCE.ctes} SELECT id FROM done`,
      );
      const { rows } = await client.query(
        "EXPLAIN EXECUTE settle_batch('{att_a}', '{settled}', '{1}', '{2026-01-01T00:00:00Z}', '{completed}', '{1}', '{1}', '{0}', '{0}', '{200}', '{1}', '{5}', '{req_1}')",
      );
      return rows.map((row) => String(row['QUERY PLAN'])).join('\n');
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE settle_batch'); // a prepared statement outlives the transaction
      client.release();
    }
  }

  it('runs each batch in a function that plans once, on the primary key, however few attempts the table held', async () => {
    const { rows } = await pool.query(
      "SELECT proname, proconfig FROM pg_proc WHERE proname IN ('svc_reserve_at_once', 'svc_settle_at_once') ORDER BY proname",
    );
    const settings = LEDGER_FUNCTION_SETTINGS.map(([name, value]) => `${name}=${value}`);
    expect(rows).toEqual([
      { proname: 'svc_reserve_at_once', proconfig: settings },
      { proname: 'svc_settle_at_once', proconfig: settings },
    ]);
    // Planned on an empty table (a new database, the first calls), the plan must not scan it: the
    // function keeps it while the table grows.
    const empty = await settlementPlan();
    expect(empty).toContain('attempts_pkey');
    expect(empty).not.toMatch(/Seq Scan on attempts/);
    // The partial index keeps entries of settled attempts until a vacuum; a plan that filters on it
    // scans them all. Many settled attempts and fresh statistics make that plan the tempting one.
    const runId = await run(1e12);
    for (let round = 0; round < 10; round++) {
      const inputs = Array.from({ length: 200 }, () => on(runId, 1));
      expect(await reserveAtOnce(query, inputs)).toBe(true);
      const settled = await settleAtOnce(
        query,
        inputs.map((input) => completedSettlement(input.attemptId)),
      );
      expect(settled.size).toBe(200);
    }
    await pool.query('ANALYZE attempts');
    const grown = await settlementPlan();
    expect(grown).toContain('attempts_pkey');
    expect(grown).not.toContain('attempts_open');
    expect(grown).not.toMatch(/Seq Scan on attempts/);
  });

  it('settlementAmountsSql decides what settlementAmounts decides', async () => {
    const states = ['settled', 'unknown', 'released'] as const;
    for (const state of states) {
      for (const [reservation, cost] of [
        [100, 40],
        [100, 100],
        [100, 250],
        [0, 0],
      ] as const) {
        const sql = settlementAmountsSql('$1::text', '$2::bigint', '$3::bigint');
        const { rows } = await pool.query(
          `SELECT (${sql.commit})::int AS commit, (${sql.overrun})::int AS overrun, (${sql.unknown})::int AS unknown`,
          [state, reservation, cost],
        );
        expect(rows[0]).toEqual(settlementAmounts(state, reservation, cost));
      }
    }
  });
});
