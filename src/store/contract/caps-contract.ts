/**
 * The spend-caps contract (money/spend-caps.ts), run unchanged on both adapters: Project and key
 * caps over their lifetime, UTC days and UTC months, admitted atomically with the Run, settled on
 * the windows the attempt was reserved in (even after they rolled over), released and committed
 * exactly like the Run, and never taken over their limit by concurrent reservations.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { SpendCaps } from '../../money/spend-caps.js';
import type { ReserveInput, Store } from '../port.js';
import { codeOf, createActiveRun, createKey, type StoreHarness } from './harness.js';

const PROJECT = 'prj_caps';
const T0 = Date.parse('2026-11-23T23:59:00.000Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

export function defineCapsContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`spend caps contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    function key(limits: SpendCaps = {}): Promise<string> {
      return createKey(store, PROJECT, limits, iso(T0));
    }

    function runWithBudget(budget: number): Promise<string> {
      return createActiveRun(store, PROJECT, budget, iso(T0), iso(T0 + 40 * DAY));
    }

    interface Call {
      keyId: string;
      amount: number;
      now?: number;
      projectCaps?: SpendCaps;
      runId?: string | null;
      attemptId?: string;
    }

    function reservation(call: Call): ReserveInput {
      const now = call.now ?? T0;
      return {
        attemptId: call.attemptId ?? newId('att'),
        projectId: PROJECT,
        keyId: call.keyId,
        runId: call.runId ?? null,
        reservationMicrosUsd: call.amount,
        projectCaps: call.projectCaps,
        now,
        createdAt: iso(now),
        leaseExpiresAt: iso(now + 60_000),
        owner: 'owner-caps',
        endpoint: '/v1/messages',
        alias: 'demo',
        connection: 'sim',
        profile: 'vendora.messages.2023-06-01',
        upstreamModel: 'sim-1',
      };
    }

    async function reserve(call: Call): Promise<string> {
      const input = reservation(call);
      await store.reserve(input);
      return input.attemptId;
    }

    function settle(attemptId: string, state: 'settled' | 'unknown' | 'released', cost: number, at = T0) {
      return store.settle({
        attemptId,
        state,
        costMicrosUsd: cost,
        usage: null,
        outcome: 'completed',
        httpStatus: 200,
        durationMs: 5,
        settledAt: iso(at),
      });
    }

    async function refusal(call: Call): Promise<GatewayError> {
      try {
        await reserve(call);
      } catch (error) {
        if (error instanceof GatewayError) return error;
        throw error;
      }
      throw new Error('expected a refusal');
    }

    it('a Project lifetime cap admits up to its limit, names itself when refusing, and frees what settles below', async () => {
      const keyId = await key();
      const projectCaps = { lifetimeMicrosUsd: 1000 };
      const first = await reserve({ keyId, amount: 600, projectCaps });
      const refused = await refusal({ keyId, amount: 500, projectCaps });
      expect(refused.code).toBe('project_budget_exceeded');
      expect(refused.status).toBe(403);
      expect(refused.message).toContain('lifetime');
      expect(refused.message).toContain(PROJECT);
      expect(refused.message).toContain('400 remaining');
      await settle(first, 'settled', 100);
      await reserve({ keyId, amount: 500, projectCaps });
      expect(await codeOf(reserve({ keyId, amount: 401, projectCaps }))).toBe('project_budget_exceeded');
      expect(await codeOf(reserve({ keyId, amount: 400, projectCaps }))).toBe('ok');
    });

    it('a key day cap rolls over at 00:00 UTC; an attempt settles in the day it was reserved', async () => {
      const keyId = await key({ dayMicrosUsd: 1000 });
      const lateOnDay1 = await reserve({ keyId, amount: 700 });
      const refused = await refusal({ keyId, amount: 400 });
      expect(refused.code).toBe('key_budget_exceeded');
      expect(refused.message).toContain('day 2026-11-23 (UTC)');
      expect(refused.message).toContain(keyId);
      const day2 = T0 + 60_000; // 2026-11-24T00:00:00Z
      await reserve({ keyId, amount: 400, now: day2 });
      // Settled after midnight: counts in 2026-11-23, so day 2 still has 600 left, exactly.
      await settle(lateOnDay1, 'settled', 700, day2);
      await reserve({ keyId, amount: 600, now: day2 });
      expect(await codeOf(reserve({ keyId, amount: 1, now: day2 }))).toBe('key_budget_exceeded');
      // Day 1 is full too: nothing admitted there would be back-dated, the window is simply past.
      expect(await codeOf(reserve({ keyId, amount: 301, now: T0 }))).toBe('key_budget_exceeded');
      expect(await codeOf(reserve({ keyId, amount: 300, now: T0 }))).toBe('ok');
    });

    it('a month cap rolls over at the first of the month (UTC) and is independent of the day cap', async () => {
      const keyId = await key({ monthMicrosUsd: 1000, dayMicrosUsd: 800 });
      const november = Date.parse('2026-11-30T23:00:00.000Z');
      await reserve({ keyId, amount: 800, now: november - DAY });
      expect((await refusal({ keyId, amount: 300, now: november })).message).toContain('month 2026-11 (UTC)');
      await reserve({ keyId, amount: 200, now: november });
      const december = Date.parse('2026-12-01T00:00:00.000Z');
      expect((await refusal({ keyId, amount: 900, now: december })).message).toContain(
        'day 2026-12-01 (UTC)',
      );
      await reserve({ keyId, amount: 800, now: december });
    });

    it('admission is atomic: a cap refusal leaves the Run untouched and a Run refusal leaves the caps untouched', async () => {
      const keyId = await key({ lifetimeMicrosUsd: 500 });
      const runId = await runWithBudget(1000);
      expect(await codeOf(reserve({ keyId, amount: 600, runId }))).toBe('key_budget_exceeded');
      expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(0);
      const projectCaps = { dayMicrosUsd: 10_000 };
      expect(await codeOf(reserve({ keyId, amount: 1001, runId, projectCaps }))).toBe('run_budget_exceeded');
      // Nothing of the refused 1001 stayed on the key: 500 still fit exactly.
      await reserve({ keyId, amount: 500, runId, projectCaps });
      expect((await store.getRun(PROJECT, runId))?.reservedMicrosUsd).toBe(500);
      // Run refused first when several limits refuse: the Run is checked first, then Project, then key.
      expect(
        await codeOf(reserve({ keyId, amount: 600, runId, projectCaps: { lifetimeMicrosUsd: 1 } })),
      ).toBe('run_budget_exceeded');
      expect(await codeOf(reserve({ keyId, amount: 1, projectCaps: { lifetimeMicrosUsd: 0 } }))).toBe(
        'project_budget_exceeded',
      );
    });

    it('settlement commits on every cap: unknown commits the whole reservation, released nothing, reaping the whole', async () => {
      const keyId = await key({ lifetimeMicrosUsd: 1000 });
      const projectCaps = { lifetimeMicrosUsd: 1000 };
      const unknown = await reserve({ keyId, amount: 300, projectCaps });
      await settle(unknown, 'unknown', 0);
      const released = await reserve({ keyId, amount: 300, projectCaps });
      await settle(released, 'released', 0);
      await reserve({ keyId, amount: 200, projectCaps, now: T0 - 120_000 });
      expect(await store.reapExpiredAttempts(iso(T0 + 1))).toHaveLength(1);
      // Committed: 300 (unknown) + 200 (reaped) = 500 on both caps; 500 left, not 501.
      expect(await codeOf(reserve({ keyId, amount: 501, projectCaps }))).toBe('project_budget_exceeded');
      expect(await codeOf(reserve({ keyId, amount: 501 }))).toBe('key_budget_exceeded');
      expect(await codeOf(reserve({ keyId, amount: 500, projectCaps }))).toBe('ok');
    });

    it('a reservation in doubt, released, gives back its reservation on the Run, the key and the Project', async () => {
      const keyId = await key({ lifetimeMicrosUsd: 1000 });
      const projectCaps = { lifetimeMicrosUsd: 1000 };
      const runId = await runWithBudget(1000);
      const inDoubt = reservation({ keyId, amount: 900, projectCaps, runId });
      await store.reserve(inDoubt);
      expect(await codeOf(reserve({ keyId, amount: 101, projectCaps, runId }))).toBe('run_budget_exceeded');
      const attemptId = inDoubt.attemptId;
      const released = await store.releaseInDoubt([inDoubt], iso(T0 + 1000));
      expect(released.map((attempt) => [attempt.attemptId, attempt.committedMicrosUsd])).toEqual([
        [attemptId, 0],
      ]);
      expect(await store.getRun(PROJECT, runId)).toMatchObject({
        reservedMicrosUsd: 0,
        committedMicrosUsd: 0,
      });
      // Every cap has its whole limit again: nothing reserved, nothing committed.
      expect(await codeOf(reserve({ keyId, amount: 1000, projectCaps, runId }))).toBe('ok');
    });

    it('concurrent reservations never take a cap over its limit', async () => {
      const keyId = await key({ dayMicrosUsd: 1_000 });
      const projectCaps = { lifetimeMicrosUsd: 1_600 };
      const otherKey = await key();
      const capped = Array.from({ length: 14 }, () => codeOf(reserve({ keyId, amount: 100, projectCaps })));
      const free = Array.from({ length: 14 }, () =>
        codeOf(reserve({ keyId: otherKey, amount: 100, projectCaps })),
      );
      const [cappedCodes, freeCodes] = await Promise.all([Promise.all(capped), Promise.all(free)]);
      const admittedCapped = cappedCodes.filter((code) => code === 'ok').length;
      const admittedFree = freeCodes.filter((code) => code === 'ok').length;
      expect(admittedCapped).toBeLessThanOrEqual(10);
      expect(admittedCapped + admittedFree).toBe(16);
      expect(
        [...cappedCodes, ...freeCodes].every((code) =>
          ['ok', 'key_budget_exceeded', 'project_budget_exceeded'].includes(code),
        ),
      ).toBe(true);
    });
  });
}
