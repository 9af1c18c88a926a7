import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, describePostgres, type TestDatabase } from '../../../test/support/postgres.js';
import { GatewayError, StoreUnavailableError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import { defineCapsContract } from '../contract/caps-contract.js';
import { defineFilesContract } from '../contract/files-contract.js';
import { defineJobsContract } from '../contract/jobs-contract.js';
import { defineReportsContract } from '../contract/reports-contract.js';
import { defineRequestLogContract } from '../contract/request-log-contract.js';
import { defineStoreContract } from '../contract/store-contract.js';
import type { Idempotency, Store } from '../port.js';
import { PostgresStore } from './postgres-store.js';

const PROJECT = 'prj_pg';
const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
const DAY = 86_400_000;

function idem(fingerprint = 'f', key = `idk-${newId('att')}`): Idempotency {
  return { projectId: PROJECT, keyId: 'key_a', key, fingerprint, createdAt: iso(), expiresAt: iso(DAY) };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to fail');
}

async function createWorkUnit(store: Store): Promise<string> {
  const id = newId('wku');
  await store.createWorkUnit(
    {
      workUnit: { id, projectId: PROJECT, status: 'open', createdAt: iso(), closedAt: null, definitions: [] },
    },
    idem(),
    (unit) => ({ id: unit.id }),
  );
  return id;
}

function createRun(store: Store, workUnitId: string, budget = 1000): Promise<string> {
  const id = newId('run');
  const run = {
    id,
    projectId: PROJECT,
    workUnitId,
    budgetMicrosUsd: budget,
    committedMicrosUsd: 0,
    reservedMicrosUsd: 0,
    overrunMicrosUsd: 0,
    unknownAttempts: 0,
    status: 'active' as const,
    createdAt: iso(),
    expiresAt: iso(DAY),
    closedAt: null,
    closeReason: null,
  };
  return store
    .createRun({ run, maxRunsPerWorkUnit: 32 }, idem(), (created) => ({ id: created.id }))
    .then(() => id);
}

function reserve(store: Store, runId: string, amount: number, leaseMs = 60_000) {
  return store.reserve({
    attemptId: newId('att'),
    projectId: PROJECT,
    keyId: 'key_a',
    runId,
    reservationMicrosUsd: amount,
    now: T0,
    createdAt: iso(),
    leaseExpiresAt: iso(leaseMs),
    owner: 'replica',
    endpoint: '/v1/messages',
    alias: 'demo',
    connection: 'sim',
    profile: 'vendora.messages.2023-06-01',
    upstreamModel: 'sim-1',
  });
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}

describePostgres('postgres store', () => {
  const openPostgres = async () => {
    const database = await createTestDatabase();
    const store = new PostgresStore({ connectionString: database.url });
    await store.migrate();
    return {
      store,
      async cleanup() {
        await store.close();
        await database.drop();
      },
    };
  };
  defineStoreContract('postgres', openPostgres);
  defineCapsContract('postgres', openPostgres);
  defineFilesContract('postgres', openPostgres);
  defineJobsContract('postgres', openPostgres);
  defineReportsContract('postgres', openPostgres);
  defineRequestLogContract('postgres', openPostgres);

  describe('across replicas and failures', () => {
    const closers: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    async function database(): Promise<TestDatabase> {
      const created = await createTestDatabase();
      closers.push(() => created.drop());
      return created;
    }

    function open(
      url: string,
      options: Partial<ConstructorParameters<typeof PostgresStore>[0]> = {},
    ): PostgresStore {
      const store = new PostgresStore({ connectionString: url, ...options });
      closers.push(() => store.close());
      return store;
    }

    async function twoReplicas(): Promise<[PostgresStore, PostgresStore]> {
      const { url } = await database();
      const first = open(url);
      const second = open(url);
      // Both start at once: the advisory lock lets exactly one of them apply the schema.
      await Promise.all([first.migrate(), second.migrate()]);
      return [first, second];
    }

    it('never over-admits 200 reservations raced by two replicas on one Run', async () => {
      const [first, second] = await twoReplicas();
      const runId = await createRun(first, await createWorkUnit(first), 7035);
      const codes = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          outcome(reserve(index % 2 === 0 ? first : second, runId, 70)),
        ),
      );
      expect(codes.filter((code) => code === 'ok')).toHaveLength(100);
      expect(codes.filter((code) => code === 'run_budget_exceeded')).toHaveLength(100);
      expect(await second.getRun(PROJECT, runId)).toMatchObject({
        reservedMicrosUsd: 7000,
        committedMicrosUsd: 0,
      });
    });

    it('group commit decides reservations in arrival order, each on its own (one replica, one batch)', async () => {
      const [first] = await twoReplicas();
      const runId = await createRun(first, await createWorkUnit(first), 100);
      // 60 goes alone (the queue was idle); 50 and 30 queue behind it and share the next batch:
      // 50 no longer fits, 30 still does.
      const codes = await Promise.all([60, 50, 30].map((amount) => outcome(reserve(first, runId, amount))));
      expect(codes).toEqual(['ok', 'run_budget_exceeded', 'ok']);
      expect(await first.getRun(PROJECT, runId)).toMatchObject({ reservedMicrosUsd: 90 });
    });

    it('a full pool on a healthy database is back-pressure: store_busy (429, Retry-After), never unavailable', async () => {
      const { url } = await database();
      const store = open(url, { poolMax: 1, queueMax: 1 });
      await store.migrate();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      closers.push(() => client.end());
      await client.query(`
        CREATE FUNCTION slow_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$;
        CREATE TRIGGER slow_keys BEFORE INSERT ON gateway_keys FOR EACH ROW EXECUTE FUNCTION slow_down();`);
      const key = (id: string) =>
        store.createKey({
          id,
          projectId: PROJECT,
          secretHash: id,
          scopes: [],
          label: null,
          createdAt: iso(),
        });
      // One holds the only connection, one waits in the queue, the third finds the queue full.
      const results = await Promise.all(
        ['key_1', 'key_2', 'key_3'].map((id) => failure(key(id)).catch(() => 'ok')),
      );
      expect(results.slice(0, 2)).toEqual(['ok', 'ok']);
      const busy = results[2];
      expect(busy).toBeInstanceOf(GatewayError);
      expect((busy as GatewayError).code).toBe('store_busy');
      expect((busy as GatewayError).status).toBe(429);
      expect((busy as GatewayError).options.retryAfter).toBe('1');
      expect((await store.listKeys(PROJECT)).map((entry) => entry.id)).toEqual(['key_1', 'key_2']);
    });

    it('creates exactly 32 Runs from 40 creations raced by two replicas', async () => {
      const [first, second] = await twoReplicas();
      const workUnitId = await createWorkUnit(first);
      const codes = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          outcome(createRun(index % 2 === 0 ? first : second, workUnitId)),
        ),
      );
      expect(codes.filter((code) => code === 'ok')).toHaveLength(32);
      expect(codes.filter((code) => code === 'governance_resource_limit')).toHaveLength(8);
      expect((await second.getWorkUnit(PROJECT, workUnitId))?.runs).toHaveLength(32);
    });

    it('reaps each orphaned attempt exactly once when two replicas reap at the same time', async () => {
      const [first, second] = await twoReplicas();
      const runIds = [
        await createRun(first, await createWorkUnit(first), 10_000),
        await createRun(first, await createWorkUnit(first), 10_000),
      ];
      for (let index = 0; index < 30; index++) await reserve(first, runIds[index % 2]!, 10 + index, 1000);
      const reaped = await Promise.all([
        first.reapExpiredAttempts(iso(5000)),
        second.reapExpiredAttempts(iso(5000)),
      ]);
      expect(reaped[0].length + reaped[1].length).toBe(30);
      expect(new Set([...reaped[0], ...reaped[1]].map((attempt) => attempt.attemptId)).size).toBe(30);
      const runs = await Promise.all(runIds.map((id) => first.getRun(PROJECT, id)));
      expect(runs.map((run) => run?.unknownAttempts)).toEqual([15, 15]);
      expect(runs.map((run) => run?.reservedMicrosUsd)).toEqual([0, 0]);
      const committed = runs.reduce((sum, run) => sum + (run?.committedMicrosUsd ?? 0), 0);
      expect(committed).toBe(Array.from({ length: 30 }, (_, index) => 10 + index).reduce((a, b) => a + b, 0));
      expect(await first.listAudit({ projectId: PROJECT, limit: 100 })).toHaveLength(30);
    });

    it('answers 409 idempotency_conflict while the first request with a key is still in flight', async () => {
      const { url } = await database();
      const store = open(url, { statementTimeoutMs: 400 });
      await store.migrate();
      const key = idem();
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      closers.push(() => holder.end());
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO idempotency (project_id, key_id, idempotency_key, fingerprint, status, response, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 0, '', $5, $6)`,
        [key.projectId, key.keyId, key.key, key.fingerprint, key.createdAt, key.expiresAt],
      );
      const started = Date.now();
      // Other keys are not held up by the in-flight one.
      expect(await outcome(createWorkUnit(store))).toBe('ok');
      const pending = store.createWorkUnit(
        {
          workUnit: {
            id: newId('wku'),
            projectId: PROJECT,
            status: 'open',
            createdAt: iso(),
            closedAt: null,
            definitions: [],
          },
        },
        key,
        (unit) => ({ id: unit.id }),
      );
      expect(await outcome(pending)).toBe('idempotency_conflict');
      expect(Date.now() - started).toBeLessThan(3000);
      await holder.query('ROLLBACK');
    });

    it('a batch of settlements stores each outcome on its attempt and audit rows', async () => {
      const { url } = await database();
      const store = open(url);
      await store.migrate();
      const runId = await createRun(store, await createWorkUnit(store), 10_000);
      for (let index = 0; index < 3; index++) await reserve(store, runId, 100);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      closers.push(() => client.end());
      const reserved = (await client.query<{ id: string }>('SELECT id FROM attempts ORDER BY id')).rows;
      const cases = [
        { state: 'settled', outcome: 'completed', cost: 40 },
        { state: 'settled', outcome: 'refused_upstream', cost: 0 },
        { state: 'unknown', outcome: 'unknown', cost: 100 },
      ] as const;
      // Settled at once, so they queue behind each other and share the settlement batch.
      await Promise.all(
        cases.map((entry, index) =>
          store.settle({
            attemptId: reserved[index]!.id,
            state: entry.state,
            costMicrosUsd: entry.cost,
            usage: null,
            outcome: entry.outcome,
            httpStatus: 200,
            durationMs: 1,
            settledAt: iso(10),
          }),
        ),
      );
      const attempts = await client.query<{ id: string; outcome: string }>(
        'SELECT id, outcome FROM attempts ORDER BY id',
      );
      const audit = await client.query<{ attempt_id: string; outcome: string }>(
        'SELECT attempt_id, outcome FROM audit ORDER BY attempt_id',
      );
      const expected = cases.map((entry) => entry.outcome);
      expect(attempts.rows.map((row) => row.outcome)).toEqual(expected);
      expect(audit.rows.map((row) => row.outcome)).toEqual(expected);
      expect(await store.getRun(PROJECT, runId)).toMatchObject({
        committedMicrosUsd: 140,
        reservedMicrosUsd: 0,
      });
    });

    it('keeps the audit trail append-only', async () => {
      const { url } = await database();
      const store = open(url);
      await store.migrate();
      const runId = await createRun(store, await createWorkUnit(store));
      await reserve(store, runId, 10, 1);
      await store.reapExpiredAttempts(iso(1000));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      closers.push(() => client.end());
      await expect(client.query('UPDATE audit SET cost = 0')).rejects.toThrow(/append-only/);
      await expect(client.query('DELETE FROM audit')).rejects.toThrow(/append-only/);
      await expect(client.query('TRUNCATE audit')).rejects.toThrow(/append-only/);
    });

    it('fails fast with StoreUnavailableError when nothing listens at the database address', async () => {
      const store = open('postgres://postgres@127.0.0.1:1/postgres');
      const started = Date.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await failure(store.getRun(PROJECT, 'run_x'))).toBeInstanceOf(StoreUnavailableError);
      expect(await failure(reserve(store, 'run_x', 1))).toBeInstanceOf(StoreUnavailableError);
      expect(await failure(createWorkUnit(store))).toBeInstanceOf(StoreUnavailableError);
      expect(await failure(store.migrate())).toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('fails fast with StoreUnavailableError when the server accepts but never answers', async () => {
      const sockets = new Set<Socket>();
      const silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      closers.push(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      });
      const address = silent.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const store = open(`postgres://postgres@127.0.0.1:${port}/postgres`, { connectTimeoutMs: 300 });
      const started = Date.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await failure(reserve(store, 'run_x', 1))).toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('survives the server terminating its idle connections (a restart) and reconnects', async () => {
      const { url } = await database();
      const idleErrors: Error[] = [];
      const store = open(url, { onIdleError: (error) => idleErrors.push(error) });
      await store.migrate();
      await Promise.all([store.ping(), store.ping(), store.ping()]);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      closers.push(() => admin.end());
      const terminated = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'svc-gateway'`,
      );
      expect(terminated.rowCount).toBeGreaterThan(0);
      const deadline = Date.now() + 2000;
      while (idleErrors.length < (terminated.rowCount ?? 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(idleErrors.length).toBe(terminated.rowCount);
      await store.ping();
      expect(await store.getRun(PROJECT, 'run_missing')).toBeUndefined();
    });

    it('maps a statement timeout to StoreUnavailableError', async () => {
      const { url } = await database();
      const store = open(url, { statementTimeoutMs: 200 });
      await store.migrate();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      closers.push(() => client.end());
      await client.query(`
        CREATE FUNCTION slow_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$;
        CREATE TRIGGER slow_keys BEFORE INSERT ON gateway_keys FOR EACH ROW EXECUTE FUNCTION slow_down();`);
      const started = Date.now();
      const error = await failure(
        store.createKey({
          id: 'key_slow',
          projectId: PROJECT,
          secretHash: 'h',
          scopes: [],
          label: null,
          createdAt: iso(),
        }),
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(((error as Error).cause as { code?: string }).code).toBe('57014');
      expect(Date.now() - started).toBeLessThan(1500);
      await store.ping();
    });
  });
});
