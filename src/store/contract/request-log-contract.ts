/**
 * The request log and attribution contract (issue 40), run unchanged against both adapters: what a
 * reservation and its settlement store for the log (call, tags, route, trace, first byte, upstream
 * request id, the Run's Work Unit and merged metadata) on every settlement path, the log's order,
 * paging and filters, open attempts, Project isolation, and the metadata filters of the lists.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import type { AttemptAttribution, Attributes, Idempotency, ReserveInput, Run, Store } from '../port.js';
import { completedSettlement, plainReservation, type StoreHarness } from './harness.js';

const PROJECT = 'prj_log';
const OTHER = 'prj_log_other';
const T0 = Date.parse('2026-07-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
const DAY = 86_400_000;

let counter = 0;
const idem = (projectId = PROJECT): Idempotency => ({
  projectId,
  keyId: 'key_a',
  key: `log-${++counter}`,
  fingerprint: 'f',
  createdAt: iso(),
  expiresAt: iso(DAY),
});

const attribution = (fields: Partial<AttemptAttribution> = {}): AttemptAttribution => ({
  callId: newId('call'),
  tags: { team: 'search', feature: 'autocomplete' },
  route: { index: 0, tried: [], skipped: [{ connection: 'b', code: 'tools', reasons: ['no tools'] }] },
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  ...fields,
});

export function defineRequestLogContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`request log contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    async function workUnit(metadata: Attributes | null, projectId = PROJECT): Promise<string> {
      const id = newId('wku');
      const unit = {
        id,
        projectId,
        status: 'open' as const,
        createdAt: iso(),
        closedAt: null,
        definitions: [],
        metadata,
      };
      await store.createWorkUnit({ workUnit: unit }, idem(projectId), (record) => record);
      return id;
    }

    async function run(workUnitId: string, metadata: Attributes | null, createdAt = iso()): Promise<string> {
      const record: Run = {
        id: newId('run'),
        projectId: PROJECT,
        workUnitId,
        budgetMicrosUsd: 1_000_000,
        committedMicrosUsd: 0,
        reservedMicrosUsd: 0,
        overrunMicrosUsd: 0,
        unknownAttempts: 0,
        status: 'active',
        createdAt,
        expiresAt: iso(DAY),
        closedAt: null,
        closeReason: null,
        metadata,
      };
      await store.createRun({ run: record, maxRunsPerWorkUnit: 32 }, idem(), (stored) => stored);
      return record.id;
    }

    function reservation(offsetMs: number, fields: Partial<ReserveInput> = {}): ReserveInput {
      const now = T0 + offsetMs;
      return plainReservation(newId('att'), {
        projectId: PROJECT,
        now,
        createdAt: iso(offsetMs),
        leaseExpiresAt: iso(offsetMs + 60_000),
        attribution: attribution(),
        ...fields,
      });
    }

    it('stores the call, tags, route, trace, first byte and upstream request id, and the Run metadata over its Work Unit', async () => {
      const unit = await workUnit({ team: 'search', feature: 'base' });
      const runId = await run(unit, { feature: 'ranking', user: 'u-1' });
      const withRun = reservation(0, { runId });
      const without = reservation(1, { attribution: attribution({ tags: null }) });
      await store.reserve(withRun);
      await store.reserve(without);
      await store.settle(
        completedSettlement(withRun.attemptId, {
          settledAt: iso(50),
          firstByteMs: 12,
          upstreamRequestId: 'req_up_1',
        }),
      );
      await store.settleAndRead(completedSettlement(without.attemptId, { settledAt: iso(60) }));
      const [second, first] = await store.requestLog.list({ projectId: PROJECT, limit: 10 });
      expect(first).toMatchObject({
        attemptId: withRun.attemptId,
        callId: withRun.attribution?.callId,
        runId,
        workUnitId: unit,
        state: 'settled',
        outcome: 'completed',
        httpStatus: 200,
        reservationMicrosUsd: 10,
        costMicrosUsd: 4,
        usage: { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
        tags: { team: 'search', feature: 'autocomplete' },
        metadata: { team: 'search', feature: 'ranking', user: 'u-1' },
        route: withRun.attribution?.route,
        firstByteMs: 12,
        durationMs: 5,
        upstreamRequestId: 'req_up_1',
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        createdAt: iso(0),
        settledAt: iso(50),
      });
      expect(second).toMatchObject({
        attemptId: without.attemptId,
        runId: null,
        workUnitId: null,
        tags: null,
        metadata: null,
        firstByteMs: null,
        upstreamRequestId: null,
      });
      // The audit trail itself carries them too.
      const [entry] = await store.listAudit({ runId, limit: 10 });
      expect(entry).toMatchObject({ workUnitId: unit, callId: withRun.attribution?.callId, firstByteMs: 12 });
    });

    it("gives every settlement of a Run that Run's Work Unit and metadata, calls of two Runs interleaved", async () => {
      const runs = [
        { unit: await workUnit({ team: 'search' }), metadata: { user: 'u-1' } },
        { unit: await workUnit({ team: 'ads' }), metadata: null },
      ];
      const runIds = [
        await run(runs[0]!.unit, runs[0]!.metadata),
        await run(runs[1]!.unit, runs[1]!.metadata),
      ];
      const reservations = [0, 1, 2, 3, 4, 5].map((at) => reservation(at, { runId: runIds[at % 2]! }));
      for (const each of reservations) await store.reserve(each);
      const settled = (index: number) =>
        completedSettlement(reservations[index]!.attemptId, { settledAt: iso(50 + index) });
      // Two in one group commit, two one at a time, then settleAndRead's own transaction.
      await Promise.all([store.settle(settled(0)), store.settle(settled(1))]);
      await store.settle(settled(2));
      await store.settle(settled(3));
      await store.settleAndRead(settled(4));
      await store.settleAndRead(settled(5));
      const log = await store.requestLog.list({ projectId: PROJECT, limit: 10 });
      expect(log).toHaveLength(6);
      for (const entry of log) {
        const side = runIds.indexOf(entry.runId!);
        expect(entry).toMatchObject({
          workUnitId: runs[side]!.unit,
          metadata: side === 0 ? { team: 'search', user: 'u-1' } : { team: 'ads' },
        });
      }
    });

    it('keeps a Run without metadata as an object of its Work Unit, and the reaper copies the attribution', async () => {
      const runId = await run(await workUnit(null), null);
      const reaped = reservation(0, { runId, leaseExpiresAt: iso(10) });
      await store.reserve(reaped);
      expect(await store.reapExpiredAttempts(iso(1000))).toHaveLength(1);
      const found = await store.requestLog.get(PROJECT, reaped.attemptId);
      expect(found).toMatchObject({
        state: 'unknown',
        outcome: 'lease_expired',
        metadata: {},
        tags: { team: 'search', feature: 'autocomplete' },
        callId: reaped.attribution?.callId,
      });
    });

    it('shows an open attempt as reserved, then once as settled; another Project never sees it', async () => {
      const runId = await run(await workUnit({ team: 'a' }), null);
      const inFlight = reservation(0, { runId });
      await store.reserve(inFlight);
      const open = await store.requestLog.get(PROJECT, inFlight.attemptId);
      expect(open).toMatchObject({
        state: 'reserved',
        outcome: null,
        costMicrosUsd: null,
        settledAt: null,
        workUnitId: expect.stringMatching(/^wku_/),
        metadata: { team: 'a' },
        tags: { team: 'search', feature: 'autocomplete' },
      });
      expect((await store.requestLog.list({ projectId: PROJECT, limit: 10 })).map((a) => a.state)).toEqual([
        'reserved',
      ]);
      expect(await store.requestLog.list({ projectId: PROJECT, outcome: 'completed', limit: 10 })).toEqual(
        [],
      );
      expect(await store.requestLog.get(OTHER, inFlight.attemptId)).toBeUndefined();
      await store.settle(completedSettlement(inFlight.attemptId, { settledAt: iso(5) }));
      const listed = await store.requestLog.list({ projectId: PROJECT, limit: 10 });
      expect(listed.map((a) => [a.attemptId, a.state])).toEqual([[inFlight.attemptId, 'settled']]);
      expect(await store.requestLog.get(OTHER, inFlight.attemptId)).toBeUndefined();
      expect(await store.requestLog.list({ projectId: OTHER, limit: 10 })).toEqual([]);
      expect(await store.requestLog.get(PROJECT, 'att_unknown')).toBeUndefined();
    });

    it('lists newest first with keyset pages and filters on every column, tag and metadata', async () => {
      const unitA = await workUnit({ team: 'a' });
      const unitB = await workUnit({ team: 'b' });
      const runA = await run(unitA, { stage: 'x' });
      const runB = await run(unitB, null);
      const inputs = [
        reservation(0, { runId: runA, keyId: 'key_a', alias: 'fast' }),
        reservation(1000, { runId: runB, keyId: 'key_b', alias: 'fast', connection: 'other' }),
        reservation(2000, { keyId: 'key_a', alias: 'slow', upstreamModel: 'big-1' }),
        reservation(3000, { attribution: attribution({ tags: { team: 'ads' } }) }),
        reservation(3000, { attribution: attribution({ tags: null }) }),
      ];
      for (const input of inputs) await store.reserve(input);
      for (const [index, input] of inputs.entries())
        await store.settle(
          completedSettlement(input.attemptId, {
            settledAt: iso(5000),
            ...(index === 2
              ? { state: 'settled', outcome: 'refused_upstream', httpStatus: 429, costMicrosUsd: 0 }
              : {}),
          }),
        );
      const ids = inputs.map((input) => input.attemptId);
      // Newest first; two attempts of the same instant in attempt id order, descending.
      const sameInstant = [ids[3]!, ids[4]!].sort().reverse();
      const expected = [...sameInstant, ids[2], ids[1], ids[0]];
      const all = await store.requestLog.list({ projectId: PROJECT, limit: 10 });
      expect(all.map((a) => a.attemptId)).toEqual(expected);
      // Keyset paging: two at a time, the cursor being the last row's position.
      const seen: string[] = [];
      let after: { createdAt: string; id: string } | undefined;
      for (;;) {
        const page = await store.requestLog.list({ projectId: PROJECT, limit: 2, after });
        seen.push(...page.map((a) => a.attemptId));
        const last = page[page.length - 1];
        if (page.length < 2 || !last) break;
        after = { createdAt: last.createdAt, id: last.attemptId };
      }
      expect(seen).toEqual(expected);
      const ids_ = async (filters: Record<string, unknown>) =>
        (await store.requestLog.list({ projectId: PROJECT, limit: 10, ...filters })).map((a) => a.attemptId);
      expect(await ids_({ keyId: 'key_b' })).toEqual([ids[1]]);
      expect(await ids_({ alias: 'fast' })).toEqual([ids[1], ids[0]]);
      expect(await ids_({ connection: 'other' })).toEqual([ids[1]]);
      expect(await ids_({ upstreamModel: 'big-1' })).toEqual([ids[2]]);
      expect(await ids_({ runId: runA })).toEqual([ids[0]]);
      expect(await ids_({ workUnitId: unitB })).toEqual([ids[1]]);
      expect(await ids_({ outcome: 'refused_upstream' })).toEqual([ids[2]]);
      expect(await ids_({ httpStatus: 429 })).toEqual([ids[2]]);
      expect(await ids_({ from: iso(1000), to: iso(3000) })).toEqual([ids[2], ids[1]]);
      expect(await ids_({ tags: { team: 'ads' } })).toEqual([ids[3]]);
      expect(await ids_({ tags: { team: 'search', feature: 'autocomplete' } })).toEqual([
        ids[2],
        ids[1],
        ids[0],
      ]);
      expect(await ids_({ metadata: { team: 'a' } })).toEqual([ids[0]]);
      expect(await ids_({ metadata: { team: 'a', stage: 'x' } })).toEqual([ids[0]]);
      expect(await ids_({ metadata: { team: 'a', stage: 'y' } })).toEqual([]);
      expect(await ids_({ tags: { 'no.such': 'x' } })).toEqual([]);
    });

    it('filters the Work Unit and Run lists by metadata, every pair ANDed', async () => {
      const tagged = await workUnit({ team: 'a', 'cost.center': 'c1' });
      await workUnit({ team: 'b' });
      await workUnit(null);
      const runTagged = await run(tagged, { user: 'u1' });
      await run(tagged, null);
      const units = async (metadata: Attributes) =>
        (await store.reports.listWorkUnits({ projectId: PROJECT, metadata, limit: 10 })).map(
          (unit) => unit.id,
        );
      expect(await units({ team: 'a' })).toEqual([tagged]);
      expect(await units({ team: 'a', 'cost.center': 'c1' })).toEqual([tagged]);
      expect(await units({ team: 'a', 'cost.center': 'c2' })).toEqual([]);
      const runs = await store.reports.listRuns({
        projectId: PROJECT,
        metadata: { user: 'u1' },
        nowIso: iso(),
        limit: 10,
      });
      expect(runs.map((found) => [found.id, found.metadata])).toEqual([[runTagged, { user: 'u1' }]]);
      const view = await store.getWorkUnit(PROJECT, tagged);
      expect(view?.workUnit.metadata).toEqual({ team: 'a', 'cost.center': 'c1' });
      expect(view?.runs.map((found) => found.metadata ?? null).sort()).toEqual([null, { user: 'u1' }].sort());
    });
  });
}
