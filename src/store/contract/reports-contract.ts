/**
 * The reports sub-port contract (Store.reports), run unchanged against every adapter: keyset lists
 * in a stable order, spend sums per hour and dimension that equal the attempts written (unknown
 * attempts included and counted apart), refusals, and each Work Unit's spend with its head Outcome.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import type { Idempotency, Store } from '../port.js';
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

    async function unitWithRun(createdAt: string): Promise<{ unit: string; run: string }> {
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
        [iso(), 'a', 2n, 620n, 1n, 500n, 10n],
        [iso(HOUR), 'b', 1n, 7n, 0n, 0n, 10n],
      ]);
      const byDay = await store.reports.spend({
        projectId: PROJECT,
        fromIso: iso(),
        toIso: iso(24 * HOUR),
        bucket: 'day',
        dimensions: [],
      });
      expect(byDay.map((row) => [row.key.bucket, row.totals.committedMicrosUsd])).toEqual([
        ['2026-06-01T00:00:00.000Z', 1627n],
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

    it('records refusals and counts them by dimension', async () => {
      for (const alias of ['a', 'a', 'b']) {
        await store.reports.recordRefusal({
          projectId: PROJECT,
          keyId: 'key_a',
          runId: null,
          alias,
          connection: '',
          upstreamModel: '',
          reason: 'run_budget_exceeded',
          createdAt: iso(60_000),
        });
      }
      const rows = await store.reports.refusals({
        projectId: PROJECT,
        fromIso: iso(),
        toIso: iso(HOUR),
        bucket: null,
        dimensions: ['alias'],
      });
      expect(rows.map((row) => [row.key.alias, row.refusals])).toEqual([
        ['a', 2n],
        ['b', 1n],
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
