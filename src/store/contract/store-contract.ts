/**
 * The store contract: one suite, run unchanged against every adapter (sqlite-store.test.ts,
 * postgres-store.test.ts). Covers idempotency, limits, revisions, the ledger's admission and
 * settlement rules, and the concurrency cases that must be exact.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { Idempotency, Outcome, Run, Store, WorkUnit } from '../port.js';
import { codeOf, completedSettlement, plainReservation, type StoreHarness } from './harness.js';

export type { StoreHarness } from './harness.js';

const PROJECT = 'prj_contract';
const OTHER_PROJECT = 'prj_other';
const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
const DAY = 86_400_000;

let keyCounter = 0;
function idem(fingerprint = 'f1', key = `k-${++keyCounter}`, projectId = PROJECT): Idempotency {
  return { projectId, keyId: 'key_a', key, fingerprint, createdAt: iso(), expiresAt: iso(DAY) };
}

const renderUnit = (unit: WorkUnit) => ({ id: unit.id, status: unit.status, closed_at: unit.closedAt });
const renderRun = (run: Run) => ({ id: run.id, status: run.status, close_reason: run.closeReason });
const renderOutcome = (outcome: Outcome) => ({
  id: outcome.id,
  revision: outcome.revision,
  seq: outcome.governanceSequence,
});

export function defineStoreContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`store contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    async function workUnit(
      projectId = PROJECT,
      definitions = [{ id: 'odef_a', version: 1 }],
    ): Promise<string> {
      const id = newId('wku');
      await store.createWorkUnit(
        { workUnit: { id, projectId, status: 'open', createdAt: iso(), closedAt: null, definitions } },
        idem('wu', undefined, projectId),
        renderUnit,
      );
      return id;
    }

    async function run(workUnitId: string, budget = 1000, ttlMs = DAY): Promise<string> {
      const id = newId('run');
      await store.createRun(
        {
          run: {
            id,
            projectId: PROJECT,
            workUnitId,
            budgetMicrosUsd: budget,
            committedMicrosUsd: 0,
            reservedMicrosUsd: 0,
            overrunMicrosUsd: 0,
            unknownAttempts: 0,
            status: 'active',
            createdAt: iso(),
            expiresAt: iso(ttlMs),
            closedAt: null,
            closeReason: null,
          },
          maxRunsPerWorkUnit: 32,
        },
        idem(),
        renderRun,
      );
      return id;
    }

    function reserve(
      runId: string | null,
      amount: number,
      now = T0,
      attemptId = newId('att'),
      leaseMs = 60_000,
    ) {
      return store.reserve(
        plainReservation(attemptId, {
          projectId: PROJECT,
          runId,
          reservationMicrosUsd: amount,
          now,
          createdAt: iso(now - T0),
          leaseExpiresAt: iso(now - T0 + leaseMs),
        }),
      );
    }

    function settle(attemptId: string, state: 'settled' | 'unknown' | 'released', cost: number) {
      return store.settle(
        completedSettlement(attemptId, { state, costMicrosUsd: cost, settledAt: iso(1000) }),
      );
    }

    it('answers ping and migrates idempotently', async () => {
      await store.ping();
      await store.migrate();
    });

    it('stores keys by hash only and revokes them', async () => {
      await store.createKey({
        id: 'key_x',
        projectId: PROJECT,
        secretHash: 'h1',
        scopes: ['inference'],
        label: null,
        createdAt: iso(),
      });
      const found = await store.findKeyByHash('h1');
      expect(found).toMatchObject({
        id: 'key_x',
        projectId: PROJECT,
        scopes: ['inference'],
        revokedAt: null,
      });
      expect(await store.revokeKey('key_x', iso(5))).toBe(true);
      expect((await store.findKeyByHash('h1'))?.revokedAt).toBe(iso(5));
      expect(await store.revokeKey('key_missing', iso())).toBe(false);
      expect((await store.listKeys(PROJECT)).map((key) => key.id)).toEqual(['key_x']);
    });

    it('never undoes the revocation of a configured key, and inserts a key only once', async () => {
      const configured = {
        id: 'key_conf',
        projectId: PROJECT,
        secretHash: 'hc1',
        scopes: ['inference'],
        label: null,
        createdAt: iso(),
      };
      await store.upsertConfiguredKey(configured);
      expect(await store.revokeKey('key_conf', iso(1))).toBe(true);
      await store.upsertConfiguredKey({
        ...configured,
        secretHash: 'hc2',
        scopes: ['inference', 'run:attach'],
      });
      expect(await store.findKeyByHash('hc2')).toMatchObject({
        scopes: ['inference', 'run:attach'],
        revokedAt: iso(1),
      });
      expect(await store.insertKeyIfAbsent({ ...configured, id: 'key_once', secretHash: 'ho1' })).toBe(true);
      expect(await store.insertKeyIfAbsent({ ...configured, id: 'key_once', secretHash: 'ho2' })).toBe(false);
      expect((await store.findKeyByHash('ho1'))?.id).toBe('key_once');
      expect(await store.findKeyByHash('ho2')).toBeUndefined();
    });

    it('keeps every version of a synced definition', async () => {
      const base = {
        projectId: PROJECT,
        id: 'odef_a',
        kind: 'CATEGORICAL' as const,
        allowedValues: ['x', 'y'],
        enabled: true,
      };
      await store.syncDefinitions([{ ...base, version: 1 }]);
      await store.syncDefinitions([{ ...base, version: 2, allowedValues: ['z'] }]);
      const versions = await store.listDefinitions(PROJECT);
      expect(versions.map((definition) => [definition.version, definition.allowedValues])).toEqual([
        [1, ['x', 'y']],
        [2, ['z']],
      ]);
    });

    it('replays an idempotent create and refuses a different request with the same key', async () => {
      const unit = {
        id: newId('wku'),
        projectId: PROJECT,
        status: 'open' as const,
        createdAt: iso(),
        closedAt: null,
        definitions: [],
      };
      const key = idem('same');
      const first = await store.createWorkUnit({ workUnit: unit }, key, renderUnit);
      expect(first).toMatchObject({ status: 201, replayed: false });
      const again = await store.createWorkUnit({ workUnit: { ...unit, id: newId('wku') } }, key, renderUnit);
      expect(again).toEqual({ status: 200, replayed: true, body: first.body });
      expect(
        await codeOf(store.createWorkUnit({ workUnit: unit }, { ...key, fingerprint: 'other' }, renderUnit)),
      ).toBe('idempotency_conflict');
    });

    it('creates exactly one resource from 20 concurrent identical requests', async () => {
      const key = idem('same');
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () =>
          store.createWorkUnit(
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
            renderUnit,
          ),
        ),
      );
      const fulfilled = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      expect(fulfilled.filter((result) => result.status === 201)).toHaveLength(1);
      const ids = new Set(fulfilled.map((result) => (result.body as { id: string }).id));
      expect(ids.size).toBe(1);
      for (const result of results) {
        if (result.status === 'rejected')
          expect((result.reason as GatewayError).code).toBe('idempotency_conflict');
      }
    });

    it('closes a Work Unit once; a second close answers 200 with the same closed_at', async () => {
      const id = await workUnit();
      const first = await store.closeWorkUnit(
        { projectId: PROJECT, id, closedAt: iso(10) },
        idem(),
        renderUnit,
      );
      const second = await store.closeWorkUnit(
        { projectId: PROJECT, id, closedAt: iso(20) },
        idem(),
        renderUnit,
      );
      expect(first.status).toBe(201);
      expect(second).toMatchObject({ status: 200, body: { closed_at: iso(10) } });
      expect(
        await codeOf(
          store.closeWorkUnit({ projectId: OTHER_PROJECT, id, closedAt: iso() }, idem(), renderUnit),
        ),
      ).toBe('work_unit_not_found');
    });

    it('refuses Runs on unknown, foreign and closed Work Units', async () => {
      expect(await codeOf(run('wku_missing'))).toBe('work_unit_not_found');
      const foreign = await workUnit(OTHER_PROJECT);
      expect(await codeOf(run(foreign))).toBe('work_unit_not_found');
      const closed = await workUnit();
      await store.closeWorkUnit({ projectId: PROJECT, id: closed, closedAt: iso() }, idem(), renderUnit);
      expect(await codeOf(run(closed))).toBe('work_unit_closed');
    });

    it('creates exactly 32 Runs from 40 concurrent creations', async () => {
      const id = await workUnit();
      const codes = await Promise.all(Array.from({ length: 40 }, () => codeOf(run(id))));
      expect(codes.filter((code) => code === 'ok')).toHaveLength(32);
      expect(codes.filter((code) => code === 'governance_resource_limit')).toHaveLength(8);
      expect((await store.getWorkUnit(PROJECT, id))?.runs).toHaveLength(32);
    });

    it('closes a Run, keeps its first reason, and refuses to close an expired one', async () => {
      const unit = await workUnit();
      const id = await run(unit);
      const first = await store.closeRun(
        { projectId: PROJECT, id, reason: 'done', closedAt: iso(1) },
        idem(),
        renderRun,
      );
      const second = await store.closeRun(
        { projectId: PROJECT, id, reason: 'other', closedAt: iso(2) },
        idem(),
        renderRun,
      );
      expect(first).toMatchObject({ status: 201, body: { status: 'closed', close_reason: 'done' } });
      expect(second).toMatchObject({ status: 200, body: { close_reason: 'done' } });
      const short = await run(unit, 1000, 1000);
      expect(
        await codeOf(
          store.closeRun(
            { projectId: PROJECT, id: short, reason: 'x', closedAt: iso(5000) },
            idem(),
            renderRun,
          ),
        ),
      ).toBe('run_not_active');
      expect(
        await codeOf(
          store.closeRun({ projectId: OTHER_PROJECT, id, reason: 'x', closedAt: iso() }, idem(), renderRun),
        ),
      ).toBe('run_not_found');
    });

    describe('outcomes', () => {
      function report(workUnitId: string, supersedes: string | null, at = iso(), checkDefinition = () => 1) {
        return store.reportOutcome(
          {
            outcome: {
              id: newId('out'),
              projectId: PROJECT,
              workUnitId,
              definitionId: 'odef_a',
              value: true,
              reporterKeyId: 'key_a',
              observedAt: iso(),
              ingestedAt: at,
              evidenceRef: null,
              evidenceSha256: null,
              supersedesOutcomeId: supersedes,
            },
            maxRevisions: 20,
            writeWindowMs: 30 * DAY,
            checkDefinition,
          },
          idem(),
          renderOutcome,
        );
      }

      it('chains revisions up to 20 and then closes writes', async () => {
        const unit = await workUnit();
        let head = ((await report(unit, null)).body as { id: string }).id;
        expect(await codeOf(report(unit, null))).toBe('outcome_revision_conflict');
        expect(await codeOf(report(unit, 'out_unknown'))).toBe('outcome_revision_conflict');
        for (let revision = 2; revision <= 20; revision++) {
          const result = await report(unit, head);
          expect(result.body).toMatchObject({ revision });
          head = (result.body as { id: string }).id;
        }
        expect(await codeOf(report(unit, head))).toBe('outcome_write_closed');
        const view = await store.getWorkUnit(PROJECT, unit);
        expect(view?.outcomes).toHaveLength(20);
        const sequences = view!.outcomes.map((outcome) => outcome.governanceSequence);
        expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
        expect(new Set(sequences).size).toBe(20);
      });

      it('lets exactly one of two concurrent revisions of the same head win', async () => {
        const unit = await workUnit();
        const head = ((await report(unit, null)).body as { id: string }).id;
        const codes = await Promise.all([codeOf(report(unit, head)), codeOf(report(unit, head))]);
        expect(codes.sort()).toEqual(['ok', 'outcome_revision_conflict']);
      });

      it('marks Outcomes on open Work Units provisional and closes writes 30 days after close', async () => {
        const unit = await workUnit();
        const first = await report(unit, null);
        await store.closeWorkUnit({ projectId: PROJECT, id: unit, closedAt: iso(DAY) }, idem(), renderUnit);
        const second = await report(unit, (first.body as { id: string }).id, iso(2 * DAY));
        const view = await store.getWorkUnit(PROJECT, unit);
        expect(view?.outcomes.map((outcome) => outcome.provisional)).toEqual([true, false]);
        expect(await codeOf(report(unit, (second.body as { id: string }).id, iso(32 * DAY)))).toBe(
          'outcome_write_closed',
        );
      });

      it('runs the definition check inside the write and answers unknown Work Units with 404', async () => {
        const unit = await workUnit();
        const refuse = () => {
          throw new GatewayError('invalid_outcome', 'nope');
        };
        expect(await codeOf(report(unit, null, iso(), refuse))).toBe('invalid_outcome');
        expect(await codeOf(report('wku_missing', null))).toBe('work_unit_not_found');
        expect((await store.getWorkUnit(PROJECT, unit))?.outcomes).toHaveLength(0);
      });
    });

    describe('ledger', () => {
      it('admits a reservation only if it fits and settles the actual cost', async () => {
        const id = await run(await workUnit(), 1000);
        const attempt = newId('att');
        await reserve(id, 600, T0, attempt);
        expect(await codeOf(reserve(id, 500))).toBe('run_budget_exceeded');
        await settle(attempt, 'settled', 150);
        const after = await store.getRun(PROJECT, id);
        expect(after).toMatchObject({ committedMicrosUsd: 150, reservedMicrosUsd: 0, unknownAttempts: 0 });
        await settle(attempt, 'settled', 999);
        expect((await store.getRun(PROJECT, id))?.committedMicrosUsd).toBe(150);
        const audit = await store.listAudit({ runId: id, limit: 10 });
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({
          attemptId: attempt,
          costMicrosUsd: 150,
          reservationMicrosUsd: 600,
          overran: false,
        });
      });

      it('settleAndRead: the first settlement answers the attempt as it left it, a later one nothing', async () => {
        const id = await run(await workUnit(), 1000);
        const settledOnce = newId('att');
        const unknown = newId('att');
        await reserve(id, 400, T0, settledOnce);
        await reserve(id, 300, T0, unknown);
        const input = {
          usage: null,
          httpStatus: null,
          durationMs: 7,
          settledAt: iso(1000),
        };
        const first = await store.settleAndRead({
          ...input,
          attemptId: settledOnce,
          state: 'settled',
          outcome: 'completed',
          costMicrosUsd: 123,
        });
        expect(first).toEqual({
          projectId: PROJECT,
          keyId: 'key_a',
          runId: id,
          endpoint: '/v1/messages',
          alias: 'demo',
          connection: 'sim',
          profile: 'vendora.messages.2023-06-01',
          upstreamModel: 'sim-1',
          reservationMicrosUsd: 400,
          committedMicrosUsd: 123,
          createdAt: iso(),
        });
        expect(
          await store.settleAndRead({
            ...input,
            attemptId: settledOnce,
            state: 'unknown',
            outcome: 'unknown',
            costMicrosUsd: 0,
          }),
        ).toBeUndefined();
        const whole = await store.settleAndRead({
          ...input,
          attemptId: unknown,
          state: 'unknown',
          outcome: 'cancelled_running',
          costMicrosUsd: 0,
        });
        expect(whole?.committedMicrosUsd).toBe(300);
        const audit = await store.listAudit({ runId: id, limit: 10 });
        expect(audit.map((entry) => [entry.attemptId, entry.costMicrosUsd])).toEqual([
          [settledOnce, 123],
          [unknown, 300],
        ]);
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 423,
          reservedMicrosUsd: 0,
        });
      });

      it('commits the whole reservation of an unknown attempt and releases a certain non-call', async () => {
        const id = await run(await workUnit(), 1000);
        const unknown = newId('att');
        const released = newId('att');
        await reserve(id, 300, T0, unknown);
        await reserve(id, 200, T0, released);
        await settle(unknown, 'unknown', 0);
        await settle(released, 'released', 0);
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 300,
          reservedMicrosUsd: 0,
          unknownAttempts: 1,
        });
      });

      it('refuses unknown, foreign, closed and expired Runs', async () => {
        const unit = await workUnit();
        expect(await codeOf(reserve('run_missing', 1))).toBe('run_not_found');
        const closed = await run(unit);
        await store.closeRun(
          { projectId: PROJECT, id: closed, reason: 'r', closedAt: iso() },
          idem(),
          renderRun,
        );
        expect(await codeOf(reserve(closed, 1))).toBe('run_not_active');
        const short = await run(unit, 1000, 1000);
        expect(await codeOf(reserve(short, 1, T0 + 2000))).toBe('run_not_active');
        expect(await codeOf(reserve(null, 1_000_000))).toBe('ok');
      });

      it('never over-admits under 200 concurrent reservations', async () => {
        const id = await run(await workUnit(), 1000);
        const codes = await Promise.all(Array.from({ length: 200 }, () => codeOf(reserve(id, 70))));
        expect(codes.filter((code) => code === 'ok')).toHaveLength(14);
        expect((await store.getRun(PROJECT, id))?.reservedMicrosUsd).toBe(980);
      });

      it('records an overrun truthfully and flags it in the audit trail', async () => {
        const id = await run(await workUnit(), 100);
        const attempt = newId('att');
        await reserve(id, 100, T0, attempt);
        await settle(attempt, 'settled', 130);
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 130,
          overrunMicrosUsd: 30,
        });
        expect((await store.listAudit({ runId: id, limit: 5 }))[0]?.overran).toBe(true);
      });

      it('reaps attempts whose lease passed at their full reservation', async () => {
        const id = await run(await workUnit(), 1000);
        await reserve(id, 400, T0, newId('att'), 1000);
        await reserve(id, 100, T0, newId('att'), 60_000);
        const reaped = await store.reapExpiredAttempts(iso(5000));
        expect(reaped).toHaveLength(1);
        // What the metrics report: the attempt's stored labels and the full reservation committed.
        expect(reaped[0]).toMatchObject({
          projectId: PROJECT,
          runId: id,
          reservationMicrosUsd: 400,
          committedMicrosUsd: 400,
          durationMs: 5000,
        });
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 400,
          reservedMicrosUsd: 100,
          unknownAttempts: 1,
        });
        expect(await store.reapExpiredAttempts(iso(5000), 'another-owner')).toHaveLength(1);
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 500,
          reservedMicrosUsd: 0,
          unknownAttempts: 2,
        });
        const audit = await store.listAudit({ runId: id, limit: 10 });
        expect(audit.map((entry) => entry.outcome)).toEqual(['lease_expired', 'lease_expired']);
      });

      it('reaps several orphans of several Runs (and none) in one pass, each Run charged its own', async () => {
        const unit = await workUnit();
        const [first, second] = [await run(unit, 1000), await run(unit, 1000)];
        const ids = [newId('att'), newId('att'), newId('att'), newId('att')];
        await reserve(first, 300, T0, ids[0], 1000);
        await reserve(second, 200, T0, ids[1], 1000);
        await reserve(first, 100, T0, ids[2], 1000);
        await reserve(null, 50, T0, ids[3], 1000);
        const reaped = await store.reapExpiredAttempts(iso(5000));
        expect(new Map(reaped.map((attempt) => [attempt.attemptId, attempt.committedMicrosUsd]))).toEqual(
          new Map([
            [ids[0], 300],
            [ids[1], 200],
            [ids[2], 100],
            [ids[3], 50],
          ]),
        );
        expect(await store.getRun(PROJECT, first)).toMatchObject({
          committedMicrosUsd: 400,
          reservedMicrosUsd: 0,
          unknownAttempts: 2,
        });
        expect(await store.getRun(PROJECT, second)).toMatchObject({
          committedMicrosUsd: 200,
          reservedMicrosUsd: 0,
          unknownAttempts: 1,
        });
        const audit = await store.listAudit({ projectId: PROJECT, limit: 10 });
        expect(audit.map((entry) => [entry.attemptId, entry.outcome, entry.costMicrosUsd])).toEqual(
          expect.arrayContaining(
            reaped.map((attempt) => [attempt.attemptId, 'lease_expired', attempt.committedMicrosUsd]),
          ),
        );
        expect(audit).toHaveLength(4);
        expect(await store.reapExpiredAttempts(iso(5000))).toEqual([]);
      });

      it('releaseInDoubt: releases a committed reservation, tombstones an absent one, leaves a settled one', async () => {
        const id = await run(await workUnit(), 1000);
        const committed = newId('att');
        const absent = newId('att');
        const settledAlready = newId('att');
        const live = newId('att');
        await reserve(id, 300, T0, committed);
        await reserve(id, 200, T0, settledAlready);
        await reserve(id, 100, T0, live);
        await settle(settledAlready, 'settled', 50);
        const inDoubt = (attemptId: string, amount: number) =>
          plainReservation(attemptId, {
            projectId: PROJECT,
            runId: id,
            reservationMicrosUsd: amount,
            now: T0,
            createdAt: iso(),
            leaseExpiresAt: iso(60_000),
          });
        const inputs = [inDoubt(committed, 300), inDoubt(absent, 250), inDoubt(settledAlready, 200)];
        const released = await store.releaseInDoubt(inputs, iso(2000));
        expect(released).toEqual([
          expect.objectContaining({
            attemptId: committed,
            runId: id,
            reservationMicrosUsd: 300,
            committedMicrosUsd: 0,
            durationMs: 2000,
          }),
        ]);
        // Only the live reservation is still held; nothing was charged for the released one.
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 50,
          reservedMicrosUsd: 100,
          unknownAttempts: 0,
        });
        const audit = await store.listAudit({ runId: id, limit: 10 });
        expect(
          audit.map((entry) => [entry.attemptId, entry.outcome, entry.state, entry.costMicrosUsd]),
        ).toEqual([
          [settledAlready, 'completed', 'settled', 50],
          [committed, 'not_sent', 'released', 0],
        ]);
        // The tombstone: the absent reservation can no longer commit, and the Run is untouched.
        await expect(reserve(id, 250, T0, absent)).rejects.toThrow();
        expect((await store.getRun(PROJECT, id))?.reservedMicrosUsd).toBe(100);
        // Resolving again changes nothing; the reaper never sees a released or tombstoned attempt.
        expect(await store.releaseInDoubt(inputs, iso(3000))).toEqual([]);
        const reaped = await store.reapExpiredAttempts(iso(120_000));
        expect(reaped.map((attempt) => attempt.attemptId)).toEqual([live]);
        expect(await store.getRun(PROJECT, id)).toMatchObject({
          committedMicrosUsd: 150,
          reservedMicrosUsd: 0,
        });
      });
    });

    it('prunes expired idempotency records', async () => {
      await workUnit();
      expect(await store.pruneIdempotency(iso(2 * DAY))).toBeGreaterThanOrEqual(1);
    });
  });
}
