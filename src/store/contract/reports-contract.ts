/**
 * The reports sub-port contract (Store.reports), run unchanged against every adapter: keyset lists
 * in a stable order, spend sums per hour and dimension that equal the attempts written (unknown
 * attempts included and counted apart), refusals, and each Work Unit's spend with its head Outcome.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import type { Attributes, AuditEntry, Idempotency, Store } from '../port.js';
import type { AttributeRef, RefusalRecord } from '../reports-port.js';
import type { StoreHarness } from './harness.js';

const PROJECT = 'prj_reports';
const T0 = Date.parse('2026-06-01T10:00:00.000Z');
const HOUR = 3_600_000;
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
let counter = 0;
const idem = (): Idempotency => ({
  projectId: PROJECT,
  keyId: 'key_a',
  key: `rk-${++counter}`,
  fingerprint: 'f',
  createdAt: iso(),
  expiresAt: iso(HOUR),
});

export function defineReportsContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`reports contract [${name}]`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => harness.cleanup());

    async function unitWithRun(
      createdAt: string,
      unitMetadata: Attributes | null = null,
      runMetadata: Attributes | null = null,
    ): Promise<{ unit: string; run: string }> {
      const unit = newId('wku');
      await store.createWorkUnit(
        {
          workUnit: {
            id: unit,
            projectId: PROJECT,
            status: 'open',
            createdAt,
            closedAt: null,
            definitions: [{ id: 'odef_a', version: 1 }],
            metadata: unitMetadata,
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
            budgetMicrosUsd: 1_000_000,
            committedMicrosUsd: 0,
            reservedMicrosUsd: 0,
            overrunMicrosUsd: 0,
            unknownAttempts: 0,
            status: 'active',
            createdAt,
            expiresAt: iso(100 * HOUR),
            closedAt: null,
            closeReason: null,
            metadata: runMetadata,
          },
          maxRunsPerWorkUnit: 32,
        },
        idem(),
        () => ({}),
      );
      return { unit, run };
    }

    async function attempt(
      run: string,
      at: number,
      alias: string,
      state: 'settled' | 'unknown',
      cost: number,
    ) {
      const attemptId = newId('att');
      await store.reserve({
        attemptId,
        projectId: PROJECT,
        keyId: 'key_a',
        runId: run,
        reservationMicrosUsd: 500,
        now: T0 + at,
        createdAt: iso(at),
        leaseExpiresAt: iso(at + HOUR),
        owner: 'o',
        endpoint: 'messages',
        alias,
        connection: 'c1',
        profile: 'p',
        upstreamModel: 'm1',
      });
      await store.settle({
        attemptId,
        state,
        costMicrosUsd: cost,
        usage:
          state === 'settled'
            ? { inputTokens: 10, outputTokens: 3, cacheCreationInputTokens: 1, cacheReadInputTokens: 2 }
            : null,
        outcome: state === 'settled' ? 'completed' : 'unknown',
        httpStatus: 200,
        durationMs: 1,
        settledAt: iso(at + 1000),
      });
    }

    it('sums spend per hour and alias exactly, unknown attempts at their reservation', async () => {
      const { run } = await unitWithRun(iso());
      await attempt(run, 0, 'a', 'settled', 120);
      await attempt(run, 10_000, 'a', 'unknown', 0);
      await attempt(run, HOUR + 5, 'b', 'settled', 7);
      await attempt(run, 5 * HOUR, 'b', 'settled', 1000);
      const rows = await store.reports.spend({
        projectId: PROJECT,
        fromIso: iso(),
        toIso: iso(2 * HOUR),
        bucket: 'hour',
        dimensions: ['alias'],
      });
      expect(
        rows.map((row) => [
          row.key.bucket,
          row.key.alias,
          row.totals.calls,
          row.totals.committedMicrosUsd,
          row.totals.unknownAttempts,
          row.totals.unknownMicrosUsd,
          row.totals.inputTokens,
        ]),
      ).toEqual([
        [iso(), 'a', 2, 620, 1, 500, 10],
        [iso(HOUR), 'b', 1, 7, 0, 0, 10],
      ]);
      const byDay = await store.reports.spend({
        projectId: PROJECT,
        fromIso: iso(),
        toIso: iso(24 * HOUR),
        bucket: 'day',
        dimensions: [],
      });
      expect(byDay.map((row) => [row.key.bucket, row.totals.committedMicrosUsd])).toEqual([
        ['2026-06-01T00:00:00.000Z', 1627],
      ]);
      const other = await store.reports.spend({
        projectId: 'prj_other',
        fromIso: iso(),
        toIso: iso(24 * HOUR),
        bucket: null,
        dimensions: [],
      });
      expect(other).toEqual([]);
    });

    /** Spend per hour and alias recomputed from the audit trail alone (store.listAudit). */
    async function recomputed(fromMs: number, toMs: number): Promise<unknown[]> {
      const rows = new Map<string, [string, string, bigint, bigint, bigint, bigint, bigint]>();
      for (const entry of await store.listAudit({ projectId: PROJECT, afterSequence: 0, limit: 10_000 })) {
        const at = Date.parse(entry.createdAt);
        if (at < fromMs || at >= toMs) continue;
        const hour = new Date(Math.floor(at / HOUR) * HOUR).toISOString();
        const key = `${hour}|${entry.alias}`;
        const row = rows.get(key) ?? [hour, entry.alias, 0n, 0n, 0n, 0n, 0n];
        row[2] += 1n;
        row[3] += BigInt(entry.costMicrosUsd);
        row[4] += entry.state === 'unknown' ? 1n : 0n;
        row[5] += entry.state === 'unknown' ? BigInt(entry.costMicrosUsd) : 0n;
        row[6] += BigInt(entry.usage?.inputTokens ?? 0);
        rows.set(key, row);
      }
      return [...rows.keys()].sort().map((key) => rows.get(key));
    }

    async function reported(fromMs: number, toMs: number): Promise<unknown[]> {
      const rows = await store.reports.spend({
        projectId: PROJECT,
        fromIso: new Date(fromMs).toISOString(),
        toIso: new Date(toMs).toISOString(),
        bucket: 'hour',
        dimensions: ['alias'],
      });
      // BigInt() of a figure refuses anything but an integer: the recomputation is in bigint.
      return rows.map((row) => [
        row.key.bucket,
        row.key.alias,
        BigInt(row.totals.calls),
        BigInt(row.totals.committedMicrosUsd),
        BigInt(row.totals.unknownAttempts),
        BigInt(row.totals.unknownMicrosUsd),
        BigInt(row.totals.inputTokens),
      ]);
    }

    const refusal = (alias: string, at: number): RefusalRecord => ({
      projectId: PROJECT,
      keyId: 'key_a',
      runId: null,
      alias,
      connection: '',
      upstreamModel: '',
      reason: 'run_budget_exceeded',
      createdAt: iso(at),
    });

    async function refused(alias: string, at: number): Promise<void> {
      await store.reports.recordRefusals([refusal(alias, at)]);
    }

    async function refusalCount(fromMs: number, toMs: number): Promise<number> {
      const rows = await store.reports.refusals({
        projectId: PROJECT,
        fromIso: new Date(fromMs).toISOString(),
        toIso: new Date(toMs).toISOString(),
        bucket: null,
        dimensions: [],
      });
      return rows.reduce((sum, row) => sum + row.refusals, 0);
    }

    it('counts traffic that arrives between two report reads exactly once (rollup and unfolded rows)', async () => {
      const { run } = await unitWithRun(iso());
      await attempt(run, 0, 'a', 'settled', 120);
      await attempt(run, HOUR + 1, 'b', 'unknown', 0);
      await refused('a', 5);
      const window: [number, number] = [T0, T0 + 3 * HOUR];
      const first = await reported(...window);
      expect(first).toEqual(await recomputed(...window));
      expect(await refusalCount(...window)).toBe(1);
      // New rows in hours the first read already summed (and rows that settle late in an old hour).
      await attempt(run, 2, 'a', 'settled', 30);
      await attempt(run, HOUR + 2, 'b', 'settled', 9);
      await attempt(run, 2 * HOUR, 'a', 'unknown', 0);
      await refused('a', 6);
      await refused('b', HOUR);
      const second = await reported(...window);
      expect(second).toEqual(await recomputed(...window));
      expect(second).toContainEqual([iso(), 'a', 2n, 150n, 0n, 0n, 20n]);
      expect(await refusalCount(...window)).toBe(3);
      // Reading again changes nothing: nothing is counted twice once folded.
      expect(await reported(...window)).toEqual(second);
      expect(await refusalCount(...window)).toBe(3);
    });

    it('records a batch of refusals in one write, every row of it, and an empty batch as nothing', async () => {
      await store.reports.recordRefusals([]);
      expect(await refusalCount(T0, T0 + 2 * HOUR)).toBe(0);
      const batch = Array.from({ length: 250 }, (_, index) => refusal(index % 2 ? 'a' : 'b', index * 1000));
      batch.push({ ...refusal('a', HOUR + 5), runId: 'run_x', connection: 'sim', upstreamModel: 'sim-1' });
      await store.reports.recordRefusals(batch);
      expect(await refusalCount(T0, T0 + HOUR)).toBe(250);
      expect(await refusalCount(T0, T0 + 2 * HOUR)).toBe(251);
    });

    it('puts attempts on either side of an hour boundary in their own hour, folded or not', async () => {
      const { run } = await unitWithRun(iso(-HOUR));
      const edges = [-1, 0, HOUR - 1, HOUR];
      for (const [index, at] of edges.entries()) await attempt(run, at, 'a', 'settled', 1001 + index);
      const inside = await reported(T0, T0 + HOUR);
      expect(inside).toEqual([[iso(), 'a', 2n, 2005n, 0n, 0n, 20n]]);
      // The same edges again after the first read folded the first ones.
      for (const [index, at] of edges.entries()) await attempt(run, at, 'a', 'settled', 1001 + index);
      expect(await reported(T0, T0 + HOUR)).toEqual([[iso(), 'a', 4n, 4010n, 0n, 0n, 40n]]);
      expect(await reported(T0 - HOUR, T0 + 2 * HOUR)).toEqual(await recomputed(T0 - HOUR, T0 + 2 * HOUR));
      // A range that cuts an hour is refused by the store itself (the API answers 400 before).
      await expect(
        store.reports.spend({
          projectId: PROJECT,
          fromIso: iso(30 * 60_000),
          toIso: iso(HOUR),
          bucket: null,
          dimensions: [],
        }),
      ).rejects.toThrow(/not a whole UTC hour/);
    });

    async function taggedAttempt(
      run: string | null,
      at: number,
      tags: Record<string, string> | null,
      cost: number,
      state: 'settled' | 'unknown' = 'settled',
    ) {
      const attemptId = newId('att');
      await store.reserve({
        attemptId,
        projectId: PROJECT,
        keyId: 'key_a',
        runId: run,
        reservationMicrosUsd: 500,
        now: T0 + at,
        createdAt: iso(at),
        leaseExpiresAt: iso(at + HOUR),
        owner: 'o',
        endpoint: 'messages',
        alias: at % 2 === 0 ? 'a' : 'b',
        connection: 'c1',
        profile: 'p',
        upstreamModel: 'm1',
        attribution: { callId: attemptId, tags, route: null, traceId: null },
      });
      await store.settle({
        attemptId,
        state,
        costMicrosUsd: cost,
        usage: {
          inputTokens: cost % 7,
          outputTokens: 1,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 2,
        },
        outcome: state === 'settled' ? 'completed' : 'unknown',
        httpStatus: 200,
        durationMs: 1,
        settledAt: iso(at + 1000),
      });
    }

    /** Spend per (hour, value of an attribute, alias?) recomputed from the audit trail alone. */
    async function recomputedBy(
      value: (entry: AuditEntry) => string | null | undefined,
      withAlias: boolean,
    ): Promise<unknown[]> {
      const rows = new Map<
        string,
        [string, string | null, string | undefined, number, number, number, number]
      >();
      for (const entry of await store.listAudit({ projectId: PROJECT, afterSequence: 0, limit: 10_000 })) {
        const hour = new Date(Math.floor(Date.parse(entry.createdAt) / HOUR) * HOUR).toISOString();
        const group: [string, string | null, string | undefined] = [
          hour,
          value(entry) ?? null,
          withAlias ? entry.alias : undefined,
        ];
        const key = JSON.stringify(group);
        const row = rows.get(key) ?? [...group, 0, 0, 0, 0];
        row[3] += 1;
        row[4] += entry.costMicrosUsd;
        row[5] += entry.state === 'unknown' ? 1 : 0;
        row[6] += entry.usage?.inputTokens ?? 0;
        rows.set(key, row);
      }
      return [...rows.values()].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    }

    async function reportedBy(attribute: AttributeRef, withAlias: boolean): Promise<unknown[]> {
      const rows = await store.reports.spend({
        projectId: PROJECT,
        fromIso: iso(-HOUR),
        toIso: iso(4 * HOUR),
        bucket: 'hour',
        dimensions: withAlias ? ['alias'] : [],
        attribute,
      });
      return rows
        .map((row) => [
          row.key.bucket,
          row.key.attribute,
          row.key.alias,
          row.totals.calls,
          row.totals.committedMicrosUsd,
          row.totals.unknownAttempts,
          row.totals.inputTokens,
        ])
        .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    }

    it('groups spend by a tag or a metadata key exactly, the group without it null, folded or not', async () => {
      const acme = await unitWithRun(iso(), { customer: 'acme', plan: '' }, { stage: 'draft' });
      const bare = await unitWithRun(iso());
      await taggedAttempt(acme.run, 0, { team: 'search', feature: 'a' }, 120);
      await taggedAttempt(acme.run, 1, { team: 'ads' }, 30, 'unknown');
      await taggedAttempt(bare.run, HOUR + 3, null, 7);
      await taggedAttempt(null, HOUR + 4, { team: 'search' }, 11);
      const team: AttributeRef = { kind: 'tag', name: 'team' };
      const customer: AttributeRef = { kind: 'metadata', name: 'customer' };
      const plan: AttributeRef = { kind: 'metadata', name: 'plan' };
      const check = async () => {
        for (const withAlias of [false, true]) {
          expect(await reportedBy(team, withAlias)).toEqual(
            await recomputedBy((e) => e.tags?.team, withAlias),
          );
          expect(await reportedBy(customer, withAlias)).toEqual(
            await recomputedBy((e) => e.metadata?.customer, withAlias),
          );
        }
        expect(await reportedBy(plan, false)).toEqual(await recomputedBy((e) => e.metadata?.plan, false));
      };
      await check();
      // More traffic in hours already read (and folded on PostgreSQL): still each attempt once.
      await taggedAttempt(acme.run, 2, { team: 'search' }, 40);
      await taggedAttempt(null, 3 * HOUR, null, 5);
      await check();
      expect(await reportedBy(team, false)).toContainEqual([
        iso(),
        'search',
        undefined,
        2,
        160,
        0,
        (120 % 7) + (40 % 7),
      ]);
      expect(await reportedBy(plan, false)).toContainEqual([
        iso(),
        '',
        undefined,
        3,
        660,
        1,
        (120 % 7) + (30 % 7) + (40 % 7),
      ]);
      // Another Project's attributes are not counted.
      const other = await store.reports.spend({
        projectId: 'prj_other',
        fromIso: iso(),
        toIso: iso(HOUR),
        bucket: null,
        dimensions: [],
        attribute: team,
      });
      expect(other).toEqual([]);
    });

    it('gives each Work Unit its metadata value, or its spend split by the tag of its attempts', async () => {
      const acme = await unitWithRun(iso(), { customer: 'acme' });
      const bare = await unitWithRun(iso());
      const idle = await unitWithRun(iso());
      await taggedAttempt(acme.run, 0, { team: 'search' }, 120);
      await taggedAttempt(acme.run, 1, { team: 'ads' }, 30, 'unknown');
      await taggedAttempt(acme.run, 2, null, 4);
      await taggedAttempt(bare.run, 3, { team: 'ads' }, 9);
      const period = { projectId: PROJECT, definitionId: 'odef_a', fromIso: iso(), toIso: iso(HOUR) };
      const byCustomer = await store.reports.workUnitSpend({
        ...period,
        groupBy: { kind: 'metadata', name: 'customer' },
      });
      expect(byCustomer.map((row) => [row.workUnitId, row.attribute, row.spendMicrosUsd]).sort()).toEqual(
        [
          [acme.unit, 'acme', 624n],
          [bare.unit, null, 9n],
          [idle.unit, null, 0n],
        ].sort(),
      );
      const byTeam = await store.reports.workUnitSpend({ ...period, groupBy: { kind: 'tag', name: 'team' } });
      expect(
        byTeam.map((row) => [row.workUnitId, row.attribute, row.spendMicrosUsd, row.unknownAttempts]).sort(),
      ).toEqual(
        [
          [acme.unit, null, 4n, 0n],
          [acme.unit, 'ads', 500n, 1n],
          [acme.unit, 'search', 120n, 0n],
          [bare.unit, 'ads', 9n, 0n],
          [idle.unit, null, 0n, 0n],
        ].sort(),
      );
      const whole = await store.reports.workUnitSpend(period);
      for (const unit of whole) {
        const parts = byTeam.filter((row) => row.workUnitId === unit.workUnitId);
        expect(parts.reduce((sum, row) => sum + row.spendMicrosUsd, 0n)).toBe(unit.spendMicrosUsd);
      }
    });

    it('records refusals and counts them by dimension', async () => {
      for (const alias of ['a', 'a', 'b']) await refused(alias, 60_000);
      const rows = await store.reports.refusals({
        projectId: PROJECT,
        fromIso: iso(),
        toIso: iso(HOUR),
        bucket: null,
        dimensions: ['alias'],
      });
      expect(rows.map((row) => [row.key.alias, row.refusals])).toEqual([
        ['a', 2],
        ['b', 1],
      ]);
    });

    it('pages Work Units newest first by keyset and gives each its spend and head Outcome', async () => {
      const units: Array<{ unit: string; run: string }> = [];
      for (let index = 0; index < 5; index++) units.push(await unitWithRun(iso(index * 1000)));
      await attempt(units[0]!.run, 0, 'a', 'settled', 40);
      await attempt(units[0]!.run, 1, 'a', 'unknown', 0);
      const first = await store.reports.listWorkUnits({ projectId: PROJECT, limit: 2 });
      const last = first[first.length - 1]!;
      const second = await store.reports.listWorkUnits({
        projectId: PROJECT,
        limit: 10,
        after: { createdAt: last.createdAt, id: last.id },
      });
      expect([...first, ...second].map((unit) => unit.id)).toEqual(units.map((unit) => unit.unit).reverse());
      await store.syncDefinitions([
        {
          projectId: PROJECT,
          id: 'odef_a',
          version: 1,
          kind: 'BOOLEAN',
          allowedValues: [true, false],
          enabled: true,
        },
      ]);
      await store.reportOutcome(
        {
          outcome: {
            id: newId('out'),
            projectId: PROJECT,
            workUnitId: units[0]!.unit,
            definitionId: 'odef_a',
            value: true,
            reporterKeyId: 'key_a',
            observedAt: iso(),
            ingestedAt: iso(),
            evidenceRef: null,
            evidenceSha256: null,
            supersedesOutcomeId: null,
          },
          maxRevisions: 20,
          writeWindowMs: HOUR,
          checkDefinition: () => 1,
        },
        idem(),
        () => ({}),
      );
      const spend = await store.reports.workUnitSpend({
        projectId: PROJECT,
        definitionId: 'odef_a',
        fromIso: iso(),
        toIso: iso(HOUR),
      });
      const head = spend.find((row) => row.workUnitId === units[0]!.unit)!;
      expect(head).toMatchObject({
        spendMicrosUsd: 540n,
        unknownAttempts: 1n,
        headValueJson: 'true',
        headProvisional: true,
      });
      expect(spend.filter((row) => row.headValueJson === null)).toHaveLength(4);
      const attempts = await store.reports.listAttempts(units[0]!.run, 0, 1);
      const rest = await store.reports.listAttempts(units[0]!.run, attempts[0]!.sequence, 10);
      expect([...attempts, ...rest].map((entry) => entry.costMicrosUsd)).toEqual([40, 500]);
    });
  });
}
