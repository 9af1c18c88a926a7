/**
 * Reservations in doubt on SQLite (PostgreSQL through a cut link: test/reliability/
 * reservation-in-doubt.test.ts). SQLite has no link to lose, so the store is made to fail the way
 * a lost link does: reserve() commits and then throws StoreUnavailableError (the reply was lost),
 * or throws without committing (the request was lost), and releaseInDoubt() fails while the
 * "outage" lasts. The call is never sent (the runner's upstream counts its sends), the client's
 * error carries the attempt id, and once the store answers the attempt is released as not_sent
 * within the resolver's bound: nothing charged, the Run's reservation back to the live ones, the
 * audit entry and the observer's settlement agreeing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReservationUnavailableError, StoreUnavailableError } from '../errors/gateway-error.js';
import { systemClock } from '../lib/clock.js';
import type { SettlementOutcome } from '../money/settlement.js';
import { type AttemptObserver, noAttemptObserver } from '../observability/attempt-observer.js';
import { createActiveRun } from '../store/contract/harness.js';
import type { ReapedAttempt, ReserveInput } from '../store/port.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { AttemptRunner, type UpstreamExchange } from './attempt-runner.js';
import { MAX_RETRY_MS } from './in-doubt.js';
import { type AttemptPlan, Ledger } from './ledger.js';

const PROJECT = 'prj_doubt';

let folder: string;
let store: SqliteStore;
let ledger: Ledger;
let runner: AttemptRunner;
let runId: string;
/** How reserve() fails next: after committing, before it, or not at all. */
let reserveFails: 'after_commit' | 'before_commit' | 'known_uncommitted' | undefined;
/** releaseInDoubt() fails while this is true (the outage); counts its tries. */
let outage: boolean;
let resolveTries: number;
let sends: number;
const observed: { held: string[]; settled: Array<[string, SettlementOutcome, number]>; refused: string[] } = {
  held: [],
  settled: [],
  refused: [],
};

const observer: AttemptObserver = {
  ...noAttemptObserver,
  refused: (_labels, reason) => observed.refused.push(reason),
  held: (attemptId) => observed.held.push(attemptId),
  settledHeld: (attemptId, _labels, _reservedAt, result) =>
    observed.settled.push([attemptId, result.outcome, result.costMicrosUsd]),
};

const exchange: UpstreamExchange<unknown> = {
  send: async () => {
    sends++;
    throw new Error('the call must never be sent');
  },
  refusal: () => ({ status: 500, message: 'unused', retryable: false }),
  read: () => Promise.reject(new Error('unused')),
  stream: () => {
    throw new Error('unused');
  },
};

function plan(reservationMicrosUsd: number): AttemptPlan {
  return {
    projectId: PROJECT,
    keyId: 'key_doubt',
    runId,
    endpoint: '/v1/messages',
    alias: 'model',
    connection: 'upstream',
    profile: 'vendora.messages.2023-06-01',
    upstreamModel: 'up-1',
    primitive: 'messages',
    streamed: false,
    reservationMicrosUsd,
  };
}

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'svc-in-doubt-'));
  store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await store.migrate();
  runId = await createActiveRun(
    store,
    PROJECT,
    10_000,
    new Date().toISOString(),
    new Date(Date.now() + 86_400_000).toISOString(),
  );
  reserveFails = undefined;
  outage = true;
  resolveTries = 0;
  sends = 0;
  observed.held = [];
  observed.settled = [];
  observed.refused = [];
  const reserve = store.reserve.bind(store);
  store.reserve = async (input: ReserveInput) => {
    const fails = reserveFails;
    reserveFails = undefined;
    if (fails === 'before_commit') throw new StoreUnavailableError('sqlite: the request was lost');
    if (fails === 'known_uncommitted')
      throw new StoreUnavailableError('sqlite: no connection', { uncommitted: true });
    await reserve(input);
    if (fails === 'after_commit') throw new StoreUnavailableError('sqlite: the reply was lost');
  };
  const releaseInDoubt = store.releaseInDoubt.bind(store);
  store.releaseInDoubt = async (inputs: ReserveInput[], settledAt: string): Promise<ReapedAttempt[]> => {
    resolveTries++;
    if (outage) throw new StoreUnavailableError('sqlite: still down');
    return releaseInDoubt(inputs, settledAt);
  };
  ledger = new Ledger(
    store,
    systemClock,
    pino({ level: 'silent' }),
    { leaseMs: 900_000, reaperIntervalMs: 60_000 },
    observer,
  );
  runner = new AttemptRunner(ledger);
});

afterEach(async () => {
  ledger.stopReaper();
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A call whose reservation fails as `how`; returns the attempt id its error named. */
async function callInDoubt(how: 'after_commit' | 'before_commit', amount: number): Promise<string> {
  reserveFails = how;
  const error = await runner.call(plan(amount), exchange).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ReservationUnavailableError);
  expect((error as ReservationUnavailableError).inDoubt).toBe(true);
  // Still the store's unavailability for every caller that knew only that (the HTTP 503).
  expect(error).toBeInstanceOf(StoreUnavailableError);
  return (error as ReservationUnavailableError).attemptId;
}

async function until(check: () => boolean, withinMs: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - started;
}

function attemptRow(id: string): Record<string, unknown> | undefined {
  const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
  return db.prepare('SELECT state, outcome, reservation, cost, run_id FROM attempts WHERE id = ?').get(id) as
    | Record<string, unknown>
    | undefined;
}

describe('a reservation the store did not confirm', () => {
  it('committed, reply lost: reserved during the outage, released as not_sent once the store answers', async () => {
    // A live call on the same Run: its reservation must stay.
    const live = await ledger.reserve(plan(700));
    const attemptId = await callInDoubt('after_commit', 2_000);
    expect(sends).toBe(0);
    expect(observed.refused).toEqual(['store_unavailable']);
    expect(attemptRow(attemptId)).toMatchObject({ state: 'reserved', reservation: 2_000 });
    expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(2_700);
    // The outage lasts a while: the resolver keeps trying, and charges nothing meanwhile.
    await until(() => resolveTries >= 3, 5_000);
    expect(attemptRow(attemptId)).toMatchObject({ state: 'reserved' });
    outage = false;
    const waitedMs = await until(() => attemptRow(attemptId)?.state !== 'reserved', MAX_RETRY_MS + 500);
    expect(waitedMs).toBeLessThanOrEqual(MAX_RETRY_MS + 500);
    expect(attemptRow(attemptId)).toMatchObject({ state: 'released', outcome: 'not_sent', cost: 0 });
    expect(await store.getRun(PROJECT, runId)).toMatchObject({
      reservedMicrosUsd: 700,
      committedMicrosUsd: 0,
      unknownAttempts: 0,
    });
    const audit = await store.listAudit({ runId, limit: 10 });
    expect(audit.map((entry) => [entry.attemptId, entry.outcome, entry.costMicrosUsd])).toEqual([
      [attemptId, 'not_sent', 0],
    ]);
    // Metrics agree with the audit trail: admitted by the store, settled not_sent at no cost.
    await until(() => observed.settled.length === 1, 1_000);
    expect(observed.held).toEqual([attemptId]);
    expect(observed.settled).toEqual([[attemptId, 'not_sent', 0]]);
    expect(ledger.inDoubt.size).toBe(0);
    await live.settle({
      outcome: 'not_sent',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: null,
    });
    expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(0);
  });

  it('never committed: a tombstone, so the reservation can never land later, and nothing reported', async () => {
    outage = false;
    const attemptId = await callInDoubt('before_commit', 2_000);
    expect(sends).toBe(0);
    await until(() => attemptRow(attemptId) !== undefined, MAX_RETRY_MS + 500);
    expect(attemptRow(attemptId)).toMatchObject({
      state: 'released',
      outcome: 'not_sent',
      reservation: 0,
      cost: 0,
      run_id: null,
    });
    expect(await store.listAudit({ runId, limit: 10 })).toEqual([]);
    expect(observed.settled).toEqual([]);
    expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(0);
  });

  it('a shutdown tries once more before the store closes', async () => {
    const attemptId = await callInDoubt('after_commit', 500);
    outage = false;
    await ledger.inDoubt.drain();
    expect(attemptRow(attemptId)).toMatchObject({ state: 'released', outcome: 'not_sent' });
    expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(0);
  });

  it('a failure the store knows did not commit is not in doubt: the id is named, nothing is written', async () => {
    outage = false;
    reserveFails = 'known_uncommitted';
    const error = await runner.call(plan(2_000), exchange).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ReservationUnavailableError);
    expect((error as ReservationUnavailableError).inDoubt).toBe(false);
    const attemptId = (error as ReservationUnavailableError).attemptId;
    expect(attemptId).toMatch(/^att_/);
    expect(ledger.inDoubt.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resolveTries).toBe(0);
    expect(attemptRow(attemptId)).toBeUndefined();
    expect(sends).toBe(0);
  });

  it('SQLite full (max_page_count): the store reads that the reservation did not commit, so it is not in doubt', async () => {
    outage = false;
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    const pages = Number(db.pragma('page_count', { simple: true }));
    db.pragma(`max_page_count = ${pages}`);
    let failure: unknown;
    for (let index = 0; index < 2_000 && failure === undefined; index++) {
      await runner.call({ ...plan(1), runId: null }, exchange).then(
        () => undefined,
        (thrown: unknown) => {
          if (thrown instanceof StoreUnavailableError) failure = thrown;
        },
      );
    }
    db.pragma('max_page_count = 1073741823');
    expect(failure, 'the file never filled up').toBeInstanceOf(ReservationUnavailableError);
    expect(String((failure as Error).message)).toContain('SQLITE_FULL');
    expect((failure as ReservationUnavailableError).inDoubt).toBe(false);
    expect(attemptRow((failure as ReservationUnavailableError).attemptId)).toBeUndefined();
    expect(ledger.inDoubt.size).toBe(0);
  });

  it('a refusal by a rule is not in doubt: nothing is left to resolve', async () => {
    const refused = await runner.call(plan(20_000), exchange).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(refused).not.toBeInstanceOf(StoreUnavailableError);
    expect(ledger.inDoubt.size).toBe(0);
  });
});
