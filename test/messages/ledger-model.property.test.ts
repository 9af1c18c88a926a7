/**
 * Model-based property test of the ledger through the store port (reliability notes 5.1, in the
 * style of TigerBeetle's auditor): random sequences of reserve, settle (actual <= reservation, and
 * rarely above it), settle unknown, release, settle again, advance time + reap, and close Run run
 * against a plain in-memory model. After every step the store must agree with the model:
 *   committed + reserved <= budget + overrun; overrun 0 while every actual <= its reservation;
 *   reserved = sum of open reservations; committed = settled costs + unknown reservations;
 *   unknown_attempts = unknown settlements; each attempt resolves (and is audited) at most once.
 * SQLite: a fresh in-memory store per sequence. PostgreSQL: one database, a fresh Run per sequence.
 */

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { newId } from '../../src/lib/ids.js';
import type { Idempotency, SettleInput, Store } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';

const PROJECT = 'prj_model';
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

type State = 'reserved' | 'settled' | 'unknown' | 'released';

interface ModelAttempt {
  id: string;
  reservation: number;
  leaseEnd: number;
  state: State;
  cost: number;
}

interface Model {
  budget: number;
  expiresAt: number;
  now: number;
  closed: boolean;
  overrun: number;
  attempts: ModelAttempt[];
}

interface Real {
  store: Store;
  runId: string;
  /** Whether the reaper's count can be checked exactly (only this sequence's attempts in the store). */
  exclusive: boolean;
}

function idempotency(label: string): Idempotency {
  return {
    projectId: PROJECT,
    keyId: 'key_model',
    key: `${label}-${randomUUID()}`,
    fingerprint: randomUUID(),
    createdAt: iso(T0),
    expiresAt: iso(T0 + 86_400_000),
  };
}

async function createRun(store: Store, budget: number, ttlMs: number): Promise<string> {
  const workUnitId = newId('wku');
  await store.createWorkUnit(
    {
      workUnit: {
        id: workUnitId,
        projectId: PROJECT,
        status: 'open',
        createdAt: iso(T0),
        closedAt: null,
        definitions: [],
      },
    },
    idempotency('wu'),
    (record) => record,
  );
  const runId = newId('run');
  await store.createRun(
    {
      run: {
        id: runId,
        projectId: PROJECT,
        workUnitId,
        budgetMicrosUsd: budget,
        committedMicrosUsd: 0,
        reservedMicrosUsd: 0,
        overrunMicrosUsd: 0,
        unknownAttempts: 0,
        status: 'active',
        createdAt: iso(T0),
        expiresAt: iso(T0 + ttlMs),
        closedAt: null,
        closeReason: null,
      },
      maxRunsPerWorkUnit: 32,
    },
    idempotency('run'),
    (record) => record,
  );
  return runId;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}

function settleInput(
  attemptId: string,
  state: Exclude<State, 'reserved'>,
  cost: number,
  now: number,
): SettleInput {
  return {
    attemptId,
    state,
    costMicrosUsd: cost,
    usage:
      state === 'settled'
        ? { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 }
        : null,
    outcome: state === 'settled' ? 'completed' : state === 'released' ? 'not_sent' : 'unknown',
    httpStatus: 200,
    durationMs: 1,
    settledAt: iso(now),
  };
}

/** The auditor: the store's Run and audit trail against the model. */
async function checkInvariants(model: Model, real: Real): Promise<void> {
  const run = await real.store.getRun(PROJECT, real.runId);
  expect(run).toBeDefined();
  const open = model.attempts.filter((attempt) => attempt.state === 'reserved');
  const settledCost = model.attempts
    .filter((attempt) => attempt.state === 'settled')
    .reduce((sum, attempt) => sum + attempt.cost, 0);
  const unknown = model.attempts.filter((attempt) => attempt.state === 'unknown');
  const expectedCommitted = settledCost + unknown.reduce((sum, attempt) => sum + attempt.reservation, 0);
  const state = {
    committed: run!.committedMicrosUsd,
    reserved: run!.reservedMicrosUsd,
    overrun: run!.overrunMicrosUsd,
    unknown: run!.unknownAttempts,
  };
  expect(state).toEqual({
    committed: expectedCommitted,
    reserved: open.reduce((sum, attempt) => sum + attempt.reservation, 0),
    overrun: model.overrun,
    unknown: unknown.length,
  });
  expect(state.committed).toBeGreaterThanOrEqual(0);
  expect(state.reserved).toBeGreaterThanOrEqual(0);
  expect(state.committed + state.reserved).toBeLessThanOrEqual(model.budget + state.overrun);
  const audit = await real.store.listAudit({ runId: real.runId, limit: 10_000 });
  const ids = audit.map((entry) => entry.attemptId);
  expect(new Set(ids).size).toBe(ids.length);
  const resolved = model.attempts.filter((attempt) => attempt.state !== 'reserved');
  expect(audit.map((entry) => [entry.attemptId, entry.state, entry.costMicrosUsd]).sort()).toEqual(
    resolved
      .map((attempt) => [
        attempt.id,
        attempt.state,
        attempt.state === 'unknown' ? attempt.reservation : attempt.cost,
      ])
      .sort(),
  );
}

type LedgerCommand = fc.AsyncCommand<Model, Real>;

class Reserve implements LedgerCommand {
  constructor(
    readonly amount: number,
    readonly leaseMs: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const id = newId('att');
    const code = await codeOf(
      real.store.reserve({
        attemptId: id,
        projectId: PROJECT,
        keyId: 'key_model',
        runId: real.runId,
        reservationMicrosUsd: this.amount,
        now: model.now,
        createdAt: iso(model.now),
        leaseExpiresAt: iso(model.now + this.leaseMs),
        owner: 'owner-model',
        endpoint: '/v1/messages',
        alias: 'model',
        connection: 'sim',
        profile: 'vendora.messages.2023-06-01',
        upstreamModel: 'sim-1',
      }),
    );
    const committed = model.attempts.reduce(
      (sum, attempt) =>
        sum +
        (attempt.state === 'settled' ? attempt.cost : attempt.state === 'unknown' ? attempt.reservation : 0),
      0,
    );
    const reserved = model.attempts.reduce(
      (sum, attempt) => sum + (attempt.state === 'reserved' ? attempt.reservation : 0),
      0,
    );
    const expected =
      model.closed || model.now >= model.expiresAt
        ? 'run_not_active'
        : committed + reserved + this.amount > model.budget
          ? 'run_budget_exceeded'
          : 'ok';
    expect(code).toBe(expected);
    if (code === 'ok')
      model.attempts.push({
        id,
        reservation: this.amount,
        leaseEnd: model.now + this.leaseMs,
        state: 'reserved',
        cost: 0,
      });
    await checkInvariants(model, real);
  }
  toString(): string {
    return `reserve(${this.amount}, lease ${this.leaseMs})`;
  }
}

/** Settles the pick-th attempt (any state: settling a resolved attempt must be a no-op). */
class Settle implements LedgerCommand {
  constructor(
    readonly pick: number,
    readonly state: Exclude<State, 'reserved'>,
    /** settled: the actual cost as a fraction of the reservation (above 1 is an overrun). */
    readonly fraction: number,
  ) {}
  check(model: Model): boolean {
    return model.attempts.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const attempt = model.attempts[this.pick % model.attempts.length]!;
    const cost = Math.floor(attempt.reservation * this.fraction);
    await real.store.settle(settleInput(attempt.id, this.state, cost, model.now));
    if (attempt.state === 'reserved') {
      attempt.state = this.state;
      attempt.cost = this.state === 'settled' ? cost : this.state === 'unknown' ? attempt.reservation : 0;
      if (this.state === 'settled' && cost > attempt.reservation) model.overrun += cost - attempt.reservation;
    }
    await checkInvariants(model, real);
  }
  toString(): string {
    return `settle(#${this.pick}, ${this.state}, x${this.fraction})`;
  }
}

/** Moves the clock (leases pass, the Run may expire) and runs the reaper. */
class AdvanceAndReap implements LedgerCommand {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    model.now += this.ms;
    const reaped = await real.store.reapExpiredAttempts(iso(model.now));
    const expired = model.attempts.filter(
      (attempt) => attempt.state === 'reserved' && attempt.leaseEnd <= model.now,
    );
    for (const attempt of expired) {
      attempt.state = 'unknown';
      attempt.cost = attempt.reservation;
    }
    if (real.exclusive) expect(reaped).toHaveLength(expired.length);
    else expect(reaped.length).toBeGreaterThanOrEqual(expired.length);
    for (const attempt of reaped) expect(attempt.committedMicrosUsd).toBe(attempt.reservationMicrosUsd);
    await checkInvariants(model, real);
  }
  toString(): string {
    return `advance(${this.ms} ms) + reap`;
  }
}

class CloseRun implements LedgerCommand {
  check(model: Model): boolean {
    return !model.closed;
  }
  async run(model: Model, real: Real): Promise<void> {
    const code = await codeOf(
      real.store.closeRun(
        { projectId: PROJECT, id: real.runId, reason: 'completed', closedAt: iso(model.now) },
        idempotency('close'),
        (record) => record,
      ),
    );
    if (model.now >= model.expiresAt) {
      expect(code).toBe('run_not_active');
    } else {
      expect(code).toBe('ok');
      model.closed = true;
    }
    await checkInvariants(model, real);
  }
  toString(): string {
    return 'closeRun';
  }
}

const commands = (overruns: boolean) => [
  fc
    .tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 5000 }))
    .map(([amount, lease]) => new Reserve(amount, lease)),
  fc
    .tuple(fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([pick, fraction]) => new Settle(pick, 'settled', fraction)),
  fc.nat().map((pick) => new Settle(pick, 'unknown', 0)),
  fc.nat().map((pick) => new Settle(pick, 'released', 0)),
  ...(overruns
    ? [
        fc
          .tuple(fc.nat(), fc.double({ min: 1.01, max: 2, noNaN: true }))
          .map(([pick, fraction]) => new Settle(pick, 'settled', fraction)),
      ]
    : []),
  fc.integer({ min: 0, max: 4000 }).map((ms) => new AdvanceAndReap(ms)),
  fc.constant(new CloseRun()),
];

function property(
  openStore: () => Promise<{ store: Store; exclusive: boolean; done(): Promise<void> }>,
  overruns: boolean,
) {
  return fc.asyncProperty(
    fc.integer({ min: 100, max: 2000 }),
    fc.integer({ min: 2000, max: 20_000 }),
    fc.commands(commands(overruns), { maxCommands: 40 }),
    async (budget, ttlMs, sequence) => {
      const opened = await openStore();
      try {
        const runId = await createRun(opened.store, budget, ttlMs);
        await fc.asyncModelRun(
          () => ({
            model: { budget, expiresAt: T0 + ttlMs, now: T0, closed: false, overrun: 0, attempts: [] },
            real: { store: opened.store, runId, exclusive: opened.exclusive },
          }),
          sequence,
        );
      } finally {
        await opened.done();
      }
    },
  );
}

async function sqliteMemory() {
  const store = new SqliteStore({ path: ':memory:', synchronous: 'normal', exclusive: false });
  await store.migrate();
  return { store: store as Store, exclusive: true, done: () => store.close() };
}

describe('ledger model [sqlite]', () => {
  it('every sequence with actual <= reservation keeps the invariants and overrun 0', async () => {
    await fc.assert(property(sqliteMemory, false), { numRuns: 250 });
  });

  it('settlements above the reservation are committed in full and counted as overrun', async () => {
    await fc.assert(property(sqliteMemory, true), { numRuns: 100 });
  });
});

describePostgres('ledger model [postgres]', () => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await createTestDatabase();
    const { PostgresStore } = await import('../../src/store/postgres/postgres-store.js');
    store = new PostgresStore({
      connectionString: database.url,
      poolMax: 4,
      connectTimeoutMs: 2000,
      statementTimeoutMs: 5000,
    });
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('every sequence keeps the invariants (a fresh Run per sequence, one database)', async () => {
    await fc.assert(
      property(async () => ({ store, exclusive: false, done: async () => undefined }), true),
      { numRuns: 30 },
    );
  });
});
