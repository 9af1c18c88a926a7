/**
 * The report rollups are folded in the background, not only by the report that reads them:
 * attempts settled while no report is read end up in the rollups and the watermarks pass them. On
 * PostgreSQL a recurring job of the gateway (reports.fold_interval_seconds) does it, once across two
 * replicas; on SQLite the store itself, every second.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, describePostgres } from '../support/postgres.js';

const PROJECT = 'prj_support';
const HOUR = 3_600_000;
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
const iso = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

const AUDIT_INSERT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile,
    upstream_model, state, reservation, cost, outcome, http_status, duration_ms, overran, created_at, settled_at)
  VALUES ($1, '${PROJECT}', 'key_a', NULL, 'messages', $2, 'c', 'p', 'm', 'settled', $3, $3, 'completed', 200, 1, false,
    $4, $4) RETURNING sequence`;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describePostgres('report fold sweep', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('folds settled attempts into the hourly rollup without any report being read, once across replicas', async () => {
    const database = await createTestDatabase();
    closers.push(() => database.drop());
    const config = {
      reports: { fold_interval_seconds: 1 },
      jobs: { poll_interval_ms: 50 },
    };
    const gateways: TestGateway[] = [];
    for (let replica = 0; replica < 2; replica++) {
      const gateway = await startTestGateway({ store: 'postgres', databaseUrl: database.url, config });
      closers.push(() => gateway.close());
      gateways.push(gateway);
    }
    expect(gateways[0]!.config.reports.fold_interval_seconds).toBe(1);
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    closers.push(() => pool.end());

    const costs: Array<[string, number, number]> = [
      ['a', 120, 0],
      ['a', 7, 10],
      ['b', 1000, HOUR + 5],
      ['a', 33, 2 * HOUR],
    ];
    let last = 0;
    for (const [index, [alias, cost, at]] of costs.entries()) {
      const inserted = await pool.query(AUDIT_INSERT, [`att_sweep_${index}`, alias, cost, iso(at)]);
      last = Number(inserted.rows[0].sequence);
    }
    const watermark = async () =>
      Number(
        (await pool.query("SELECT watermark FROM report_folds WHERE source = 'audit'")).rows[0].watermark,
      );
    expect(await watermark()).toBeLessThan(last);

    expect(await until(watermark, (value) => value >= last)).toBe(last);
    const rollup = await pool.query(
      `SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS hour, alias,
         SUM(calls)::int AS calls, SUM(committed)::int AS committed
       FROM audit_hourly WHERE project_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [PROJECT],
    );
    // Each attempt counted once although two replicas ran the sweep.
    expect(rollup.rows).toEqual([
      { hour: iso(0), alias: 'a', calls: 2, committed: 127 },
      { hour: iso(HOUR), alias: 'b', calls: 1, committed: 1000 },
      { hour: iso(2 * HOUR), alias: 'a', calls: 1, committed: 33 },
    ]);
    // Later traffic is folded by a later pass.
    const more = await pool.query(AUDIT_INSERT, ['att_sweep_late', 'b', 5, iso(HOUR + 9)]);
    expect(await until(watermark, (value) => value >= Number(more.rows[0].sequence))).toBe(
      Number(more.rows[0].sequence),
    );
    const hourB = await pool.query(
      'SELECT SUM(calls)::int AS calls, SUM(committed)::int AS committed FROM audit_hourly WHERE hour = $1',
      [iso(HOUR)],
    );
    expect(hourB.rows[0]).toEqual({ calls: 2, committed: 1005 });
    // One recurring job for both replicas (each pass leased by one of them).
    const jobs = await pool.query("SELECT state FROM jobs WHERE id = 'sweep:report-fold'");
    expect(jobs.rows).toEqual([{ state: 'pending' }]);
  }, 60_000);
});

describe('report fold on SQLite', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('folds settled attempts into both hourly rollups within seconds, without any report being read', async () => {
    const gateway = await startTestGateway({ store: 'sqlite' });
    closers.push(() => gateway.close());
    const settle = async (index: number, alias: string, cost: number, at: number) => {
      const attemptId = `att_sweep_${index}`;
      await gateway.store.reserve({
        attemptId,
        projectId: PROJECT,
        keyId: 'key_a',
        runId: null,
        reservationMicrosUsd: 5_000,
        now: T0 + at,
        createdAt: iso(at),
        leaseExpiresAt: iso(at + HOUR),
        owner: 'o',
        endpoint: 'messages',
        alias,
        connection: 'c',
        profile: 'p',
        upstreamModel: 'm',
        attribution: { callId: attemptId, tags: { team: alias }, route: null, traceId: null },
      });
      await gateway.store.settle({
        attemptId,
        state: 'settled',
        costMicrosUsd: cost,
        usage: { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
        outcome: 'completed',
        httpStatus: 200,
        durationMs: 1,
        settledAt: iso(at + 1),
      });
    };
    await settle(0, 'a', 120, 0);
    await settle(1, 'a', 7, 10);
    await settle(2, 'b', 1000, HOUR + 5);
    const path = (gateway.config.store as { sqlite: { path: string } }).sqlite.path;
    const db = new Database(path, { readonly: true });
    closers.push(async () => void db.close());
    const last = (db.prepare('SELECT max(sequence) AS last FROM audit').get() as { last: number }).last;
    const watermarks = async () =>
      db.prepare('SELECT source, watermark FROM report_folds ORDER BY source').all() as Array<{
        source: string;
        watermark: number;
      }>;
    const folded = await until(watermarks, (rows) => rows.every((row) => row.watermark >= last));
    expect(folded).toEqual([
      { source: 'audit', watermark: last },
      { source: 'audit_attributes', watermark: last },
    ]);
    expect(
      db
        .prepare(
          `SELECT hour, alias, SUM(calls) AS calls, SUM(committed) AS committed FROM audit_hourly
           WHERE project_id = ? GROUP BY 1, 2 ORDER BY 1, 2`,
        )
        .all(PROJECT),
    ).toEqual([
      { hour: iso(0).slice(0, 13), alias: 'a', calls: 2, committed: 127 },
      { hour: iso(HOUR).slice(0, 13), alias: 'b', calls: 1, committed: 1000 },
    ]);
    expect(
      db
        .prepare(
          `SELECT value, SUM(calls) AS calls FROM audit_attribute_hourly
           WHERE project_id = ? AND kind = 'tag' AND name = 'team' GROUP BY 1 ORDER BY 1`,
        )
        .all(PROJECT),
    ).toEqual([
      { value: 'a', calls: 2 },
      { value: 'b', calls: 1 },
    ]);
  }, 60_000);
});
