/**
 * Two gateway processes (two replicas) on one PostgreSQL database: the governance races of the
 * concurrency suite, with every request alternating between the replicas, so the only thing they
 * share is the database. Each guarantee must come from row locks, conditional updates and unique
 * indexes, never from one process's memory.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import {
  type CallResult,
  countBy,
  expectSvcError,
  get,
  newIdempotencyKey,
  outcomeBody,
  post,
} from './support.js';

describePostgres('reliability: two gateway processes on one PostgreSQL database', () => {
  let database: TestDatabase;
  const folder = tempFolder('two-processes');
  let replicas: GatewayProcess[] = [];
  let key: string;

  /** The replica that serves request `index` (alternating). */
  const replica = (index: number): GatewayProcess => replicas[index % replicas.length]!;

  async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const options = (name: string) => ({
      name,
      folder: folder.path,
      environment: { SVC_RELIABILITY_DATABASE_URL: database.url },
      config: {
        store: { kind: 'postgres', postgres: { url_env: 'SVC_RELIABILITY_DATABASE_URL' } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
      },
    });
    // The first start runs the migrations; the second then starts on a migrated database.
    replicas = [await startGatewayProcess(options('replica-a'))];
    replicas.push(await startGatewayProcess(options('replica-b')));
    key = replicas[0]!.key;
    expect(replicas[1]!.key).toBe(key);
    expect(replicas[0]!.pid).not.toBe(replicas[1]!.pid);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((gateway) => gateway.stop()));
    await stopAllGatewayProcesses();
    await database?.drop();
    folder.remove();
  });

  async function createWorkUnit(index = 0): Promise<string> {
    const result = await post(replica(index).url, key, '/svc/v1/work-units', {});
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body.id as string;
  }

  it('20 identical Run creations with one Idempotency-Key over both replicas: one 201, the rest 200 (or 409 in flight), one Run', async () => {
    for (let round = 0; round < 3; round++) {
      const unit = await createWorkUnit(round);
      const idempotencyKey = newIdempotencyKey('same');
      const body = { work_unit_id: unit, budget_micros_usd: 4321 };
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          post(replica(index).url, key, '/svc/v1/runs', body, idempotencyKey),
        ),
      );
      const counts = countBy(results);
      expect(counts[201], JSON.stringify(counts)).toBe(1);
      expect((counts[200] ?? 0) + (counts[409] ?? 0), JSON.stringify(counts)).toBe(19);
      const created = results.find((result) => result.status === 201)!;
      for (const result of results) {
        if (result.status === 200) expect(result.body).toEqual(created.body);
        if (result.status === 409) expectSvcError(result, 409, 'idempotency_conflict');
      }
      // Both replicas now replay the same Run.
      for (const gateway of replicas) {
        const replay = await post(gateway.url, key, '/svc/v1/runs', body, idempotencyKey);
        expect(replay.status).toBe(200);
        expect(replay.body).toEqual(created.body);
      }
      const view = await get(replica(round + 1).url, key, `/svc/v1/work-units/${unit}`);
      expect(view.body.runs.map((run: { id: string }) => run.id)).toEqual([created.body.id]);
      const rows = await sql('SELECT count(*)::int AS runs FROM runs WHERE work_unit_id = $1', [unit]);
      expect(rows.rows[0].runs).toBe(1);
    }
  });

  it('40 Run creations on one Work Unit over both replicas: exactly 32 x 201 and 8 x 429 governance_resource_limit', async () => {
    const unit = await createWorkUnit();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        post(replica(index).url, key, '/svc/v1/runs', {
          work_unit_id: unit,
          budget_micros_usd: 1000 + index,
        }),
      ),
    );
    expect(countBy(results)).toEqual({ 201: 32, 429: 8 });
    for (const result of results) {
      if (result.status !== 429) continue;
      expectSvcError(result, 429, 'governance_resource_limit');
      expect(result.headers.get('retry-after')).toBeNull();
    }
    // Each replica served 20 requests, so each created at least 12 of the 32.
    const createdBy = [0, 1].map(
      (which) => results.filter((result, index) => index % 2 === which && result.status === 201).length,
    );
    expect(Math.min(...createdBy)).toBeGreaterThanOrEqual(12);
    const createdIds = new Set(
      results.filter((result) => result.status === 201).map((result) => result.body.id as string),
    );
    for (const gateway of replicas) {
      const view = await get(gateway.url, key, `/svc/v1/work-units/${unit}`);
      expect(view.status).toBe(200);
      expect(view.body.runs).toHaveLength(32);
      expect(new Set(view.body.runs.map((run: { id: string }) => run.id))).toEqual(createdIds);
    }
    const rows = await sql(
      'SELECT w.run_count, (SELECT count(*)::int FROM runs r WHERE r.work_unit_id = w.id) AS runs FROM work_units w WHERE w.id = $1',
      [unit],
    );
    expect(rows.rows[0]).toEqual({ run_count: 32, runs: 32 });
    // The 33rd still fails once the race is over, on either replica.
    for (const gateway of replicas) {
      expectSvcError(
        await post(gateway.url, key, '/svc/v1/runs', { work_unit_id: unit }),
        429,
        'governance_resource_limit',
      );
    }
  });

  it('two concurrent revisions of one Outcome head, one per replica: one 201, one 409 outcome_revision_conflict', async () => {
    for (let round = 0; round < 5; round++) {
      const unit = await createWorkUnit(round);
      const first = await post(
        replica(round + 1).url,
        key,
        `/svc/v1/work-units/${unit}/outcomes`,
        outcomeBody(true),
      );
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const results: CallResult[] = await Promise.all(
        replicas.map((gateway, index) =>
          post(
            gateway.url,
            key,
            `/svc/v1/work-units/${unit}/outcomes`,
            outcomeBody(index === 0, first.body.id),
          ),
        ),
      );
      expect(countBy(results), JSON.stringify(results.map((result) => result.body))).toEqual({
        201: 1,
        409: 1,
      });
      const winner = results.find((result) => result.status === 201)!;
      expectSvcError(results.find((result) => result.status === 409)!, 409, 'outcome_revision_conflict');
      expect(winner.body).toMatchObject({ revision: 2, supersedes_outcome_id: first.body.id });
      const view = await get(replica(round).url, key, `/svc/v1/work-units/${unit}`);
      expect(view.body.outcomes).toEqual([first.body, winner.body]);
      const heads = await sql('SELECT id FROM outcomes WHERE work_unit_id = $1 AND is_head', [unit]);
      expect(heads.rows).toEqual([{ id: winner.body.id }]);
    }
  });
});
