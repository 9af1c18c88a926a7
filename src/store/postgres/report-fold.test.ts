/**
 * The fold watermark on a real PostgreSQL: ids commit out of order, so a fold must never pass an id
 * a still-open transaction holds; concurrent settlements read between folds are counted exactly
 * once; a backlog folded in chunks sums to the same figures.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createTestDatabase, describePostgres } from '../../../test/support/postgres.js';
import { newId } from '../../lib/ids.js';
import type { Row } from '../rows.js';
import { PostgresStore } from './postgres-store.js';
import { ReportFolder } from './report-fold.js';

const PROJECT = 'prj_fold';
const T0 = Date.parse('2026-06-01T10:00:00.000Z');
const HOUR = 3_600_000;
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
const RANGE = { projectId: PROJECT, fromIso: iso(-HOUR), toIso: iso(3 * HOUR) };

describePostgres('report fold', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function setup() {
    const database = await createTestDatabase();
    const store = new PostgresStore({ connectionString: database.url });
    await store.migrate();
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    closers.push(() => database.drop());
    closers.push(() => store.close());
    closers.push(() => pool.end());
    const folder = (options: { chunk: number; waitMs: number }) =>
      new ReportFolder(
        (text, values) => pool.query<Row>(text, values),
        async (work) => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            const result = await work(client);
            await client.query('COMMIT');
            return result;
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          } finally {
            client.release();
          }
        },
        options,
      );
    const watermark = async () =>
      Number(
        (await pool.query("SELECT watermark FROM report_folds WHERE source = 'audit'")).rows[0].watermark,
      );
    const committed = async () => {
      const rows = await store.reports.spend({ ...RANGE, bucket: null, dimensions: [] });
      return rows.reduce((sum, row) => sum + BigInt(row.totals.committedMicrosUsd), 0n);
    };
    return { store, pool, folder, watermark, committed };
  }

  const AUDIT_INSERT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile,
      upstream_model, state, reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
    VALUES ($1, '${PROJECT}', 'key_a', NULL, 'messages', 'a', 'c', 'p', 'm', 'settled', $2, $2, 'completed', 200, 1, false,
      $3, $3) RETURNING sequence`;

  it('never passes an id held by an open transaction, and counts it once it commits', async () => {
    const { pool, folder, watermark, committed } = await setup();
    const open = await pool.connect();
    closers.push(async () => open.release());
    await open.query('BEGIN');
    const held = await open.query(AUDIT_INSERT, [newId('att'), 100, iso()]);
    const later = await pool.query(AUDIT_INSERT, [newId('att'), 10, iso(HOUR)]);
    expect(Number(later.rows[0].sequence)).toBeGreaterThan(Number(held.rows[0].sequence));

    // The committed row with the larger id is visible; the smaller one is not yet: no fold may pass it.
    expect(await folder({ chunk: 1000, waitMs: 30 }).fold('audit')).toBe(false);
    expect(await watermark()).toBe(0);
    expect(await committed()).toBe(10n);

    await open.query('COMMIT');
    expect(await committed()).toBe(110n);
    expect(await folder({ chunk: 1000, waitMs: 30 }).fold('audit')).toBe(true);
    expect(await watermark()).toBe(Number(later.rows[0].sequence));
    expect(await committed()).toBe(110n);
  });

  it('waits for a writer that ends within the wait, then folds past its id', async () => {
    const { pool, folder, watermark, committed } = await setup();
    const open = await pool.connect();
    closers.push(async () => open.release());
    await open.query('BEGIN');
    await open.query(AUDIT_INSERT, [newId('att'), 7, iso()]);
    const last = await pool.query(AUDIT_INSERT, [newId('att'), 5, iso()]);
    const folding = folder({ chunk: 1000, waitMs: 5000 }).fold('audit');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await open.query('COMMIT');
    expect(await folding).toBe(true);
    expect(await watermark()).toBe(Number(last.rows[0].sequence));
    expect(await committed()).toBe(12n);
  });

  it('folds a backlog in chunks to the same figures as the raw rows', async () => {
    const { pool, folder, watermark, store } = await setup();
    for (let index = 0; index < 25; index++) {
      await pool.query(AUDIT_INSERT, [newId('att'), index + 1, iso((index % 3) * HOUR + index)]);
    }
    const rawRows = await store.reports.spend({ ...RANGE, bucket: 'hour', dimensions: ['alias'] });
    await pool.query("UPDATE report_folds SET watermark = 0 WHERE source = 'audit'");
    await pool.query('DELETE FROM audit_hourly');
    expect(await folder({ chunk: 4, waitMs: 100 }).fold('audit')).toBe(true);
    expect(await watermark()).toBe(25);
    expect(Number((await pool.query('SELECT count(*) AS n FROM audit_hourly')).rows[0].n)).toBe(3);
    expect(await store.reports.spend({ ...RANGE, bucket: 'hour', dimensions: ['alias'] })).toEqual(rawRows);
    expect(rawRows.map((row) => row.totals.committedMicrosUsd)).toEqual([117, 100, 108]);
  });

  it('reads taken while settlements run concurrently never count an attempt twice or lose one', async () => {
    const { store, committed } = await setup();
    const unit = newId('wku');
    const idem = () => ({
      projectId: PROJECT,
      keyId: 'key_a',
      key: newId('att'),
      fingerprint: 'f',
      createdAt: iso(),
      expiresAt: iso(HOUR),
    });
    await store.createWorkUnit(
      {
        workUnit: {
          id: unit,
          projectId: PROJECT,
          status: 'open',
          createdAt: iso(),
          closedAt: null,
          definitions: [],
        },
      },
      idem(),
      () => ({}),
    );
    const run = newId('run');
    await store.createRun(
      {
        run: {
          id: run,
          projectId: PROJECT,
          workUnitId: unit,
          budgetMicrosUsd: 100_000_000,
          committedMicrosUsd: 0,
          reservedMicrosUsd: 0,
          overrunMicrosUsd: 0,
          unknownAttempts: 0,
          status: 'active',
          createdAt: iso(),
          expiresAt: iso(100 * HOUR),
          closedAt: null,
          closeReason: null,
        },
        maxRunsPerWorkUnit: 4,
      },
      idem(),
      () => ({}),
    );
    const call = async (index: number) => {
      const attemptId = newId('att');
      await store.reserve({
        attemptId,
        projectId: PROJECT,
        keyId: 'key_a',
        runId: run,
        reservationMicrosUsd: 1000,
        now: T0,
        createdAt: iso(index * 1000),
        leaseExpiresAt: iso(HOUR),
        owner: 'o',
        endpoint: 'messages',
        alias: 'a',
        connection: 'c',
        profile: 'p',
        upstreamModel: 'm',
      });
      await store.settle({
        attemptId,
        state: 'settled',
        costMicrosUsd: index + 1,
        usage: null,
        outcome: 'completed',
        httpStatus: 200,
        durationMs: 1,
        settledAt: iso(index * 1000 + 1),
      });
    };
    const COUNT = 120;
    let started = 0n;
    let done = 0n;
    const tracked = async (index: number) => {
      started += BigInt(index + 1);
      await call(index);
      done += BigInt(index + 1);
    };
    const writers = (async () => {
      for (let index = 0; index < COUNT; index += 8) {
        await Promise.all(Array.from({ length: 8 }, (_, offset) => tracked(index + offset)));
      }
    })();
    const seen: bigint[] = [];
    let finished = false;
    void writers.finally(() => {
      finished = true;
    });
    while (!finished) {
      const before = done;
      const read = await committed();
      // Never less than what had settled before the read, never more than what had started by its end.
      expect(read).toBeGreaterThanOrEqual(before);
      expect(read).toBeLessThanOrEqual(started);
      seen.push(read);
    }
    await writers;
    expect(seen.length).toBeGreaterThan(1);
    expect(await committed()).toBe(BigInt((COUNT * (COUNT + 1)) / 2));
  }, 60_000);
});
