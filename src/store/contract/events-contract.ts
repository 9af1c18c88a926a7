/**
 * The events outbox contract (Store.events), run unchanged against both adapters: appending, the
 * dedupe key that makes an event fire once, the global and per-Project reads, filters, paging and
 * retention.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import type { EventRecord, EventType, Idempotency, NewEvent, ReserveInput, Store } from '../port.js';
import {
  codeOf,
  createActiveRun,
  createKey,
  plainReservation as reservation0,
  type StoreHarness,
  completedSettlement as settlement0,
} from './harness.js';
import { batch, response } from './jobs-contract.js';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();

const reservation = (attemptId: string) => reservation0(attemptId, { projectId: 'prj_events' });
const settlement = (attemptId: string, cost: number) => settlement0(attemptId, { costMicrosUsd: cost });

export function sampleEvent(fields: Partial<NewEvent> = {}): NewEvent {
  return {
    id: newId('evt'),
    projectId: 'prj_events',
    type: 'key.revoked',
    resourceType: 'key',
    resourceId: 'key_1',
    occurredAt: iso(),
    data: { key_id: 'key_1', revoked_at: iso() },
    ...fields,
  };
}

export function defineEventsContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`events contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    it('appends events and reads them back in sequence order, data and times intact', async () => {
      const first = sampleEvent({ data: { nested: { a: [1, 2] }, amount: 5, flag: true, none: null } });
      const second = sampleEvent({ type: 'outcome.reported', resourceType: 'work_unit', occurredAt: iso(1) });
      await store.events.appendEvents([first, second]);
      const all = await store.events.listEventsAfter(0, 10);
      expect(all.map((event) => event.id)).toEqual([first.id, second.id]);
      expect(all[0]!.sequence).toBeLessThan(all[1]!.sequence);
      expect(all[0]).toMatchObject({
        projectId: 'prj_events',
        type: 'key.revoked',
        resourceType: 'key',
        resourceId: 'key_1',
        occurredAt: iso(),
        data: { nested: { a: [1, 2] }, amount: 5, flag: true, none: null },
      });
      expect(await store.events.listEventsAfter(all[0]!.sequence, 10)).toHaveLength(1);
      expect(await store.events.listEventsAfter(0, 1)).toHaveLength(1);
    });

    it('writes an event with a dedupe key once, however often and however concurrently it is appended', async () => {
      const dedupeKey = 'run.budget_threshold:run_x:lifetime:0.5';
      await Promise.all(
        Array.from({ length: 8 }, () => store.events.appendEvents([sampleEvent({ dedupeKey })])),
      );
      await store.events.appendEvents([sampleEvent({ dedupeKey }), sampleEvent()]);
      const all = await store.events.listEventsAfter(0, 100);
      expect(all).toHaveLength(2);
      // events without a dedupe key are never deduplicated
      await store.events.appendEvents([sampleEvent({ dedupeKey: null }), sampleEvent({ dedupeKey: null })]);
      expect(await store.events.listEventsAfter(0, 100)).toHaveLength(4);
    });

    it('reads one Project only, by id and by list; another Project cannot see it', async () => {
      const mine = sampleEvent();
      const theirs = sampleEvent({ projectId: 'prj_other' });
      await store.events.appendEvents([mine, theirs]);
      expect((await store.events.getEvent('prj_events', mine.id))?.id).toBe(mine.id);
      expect(await store.events.getEvent('prj_other', mine.id)).toBeUndefined();
      expect(await store.events.getEvent('prj_events', 'evt_missing')).toBeUndefined();
      const listed = await store.events.listEvents('prj_events', { limit: 10 });
      expect(listed.map((event) => event.id)).toEqual([mine.id]);
    });

    it('filters by type, resource and time, and pages by sequence', async () => {
      const events = [
        sampleEvent({ occurredAt: iso(0) }),
        sampleEvent({ type: 'key.expired', occurredAt: iso(1000) }),
        sampleEvent({ resourceId: 'key_2', occurredAt: iso(2000) }),
        sampleEvent({ type: 'run.expired', resourceType: 'run', resourceId: 'run_1', occurredAt: iso(3000) }),
      ];
      await store.events.appendEvents(events);
      const ids = async (query: Parameters<Store['events']['listEvents']>[1]) =>
        (await store.events.listEvents('prj_events', query)).map((event) => event.id);
      expect(await ids({ limit: 10, type: 'key.expired' })).toEqual([events[1]!.id]);
      expect(await ids({ limit: 10, resourceType: 'run' })).toEqual([events[3]!.id]);
      expect(await ids({ limit: 10, resourceType: 'key', resourceId: 'key_1' })).toEqual([
        events[0]!.id,
        events[1]!.id,
      ]);
      expect(await ids({ limit: 10, from: iso(1000), to: iso(3000) })).toEqual([
        events[1]!.id,
        events[2]!.id,
      ]);
      const firstPage = await store.events.listEvents('prj_events', { limit: 2 });
      expect(firstPage.map((event) => event.id)).toEqual([events[0]!.id, events[1]!.id]);
      expect(await ids({ limit: 2, afterSequence: firstPage[1]!.sequence })).toEqual([
        events[2]!.id,
        events[3]!.id,
      ]);
    });

    it('deletes events older than the retention in bounded batches', async () => {
      await store.events.appendEvents([
        sampleEvent({ occurredAt: iso(0) }),
        sampleEvent({ occurredAt: iso(1) }),
        sampleEvent({ occurredAt: iso(2) }),
        sampleEvent({ occurredAt: iso(10_000) }),
      ]);
      expect(await store.events.deleteEventsBefore(iso(5000), 2)).toBe(2);
      expect(await store.events.deleteEventsBefore(iso(5000), 2)).toBe(1);
      expect(await store.events.deleteEventsBefore(iso(5000), 2)).toBe(0);
      const left = await store.events.listEventsAfter(0, 10);
      expect(left.map((event) => event.occurredAt)).toEqual([iso(10_000)]);
    });

    const idem = (key = newId('att')): Idempotency => ({
      projectId: 'prj_events',
      keyId: 'key_a',
      key,
      fingerprint: 'f',
      createdAt: iso(),
      expiresAt: iso(86_400_000),
    });
    const ofType = async (type: EventType): Promise<EventRecord[]> =>
      (await store.events.listEventsAfter(0, 1000)).filter((event) => event.type === type);

    it('key.revoked: once, in the revocation, by the API and by the configured-key path', async () => {
      const keyId = await createKey(store, 'prj_events', {}, iso());
      const revoke = () =>
        store.keys.revoke({ projectId: 'prj_events', id: keyId, revokedAt: iso(5) }, null, (key) => key);
      expect((await revoke()).status).toBe(201);
      expect((await revoke()).status).toBe(200);
      const events = await ofType('key.revoked');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        projectId: 'prj_events',
        resourceType: 'key',
        resourceId: keyId,
        occurredAt: iso(5),
        data: { key_id: keyId, revoked_at: iso(5) },
      });
      await store.createKey({
        id: 'key_configured',
        projectId: 'prj_events',
        secretHash: 'hash-configured',
        scopes: ['inference'],
        label: 'ops',
        createdAt: iso(),
      });
      expect(await store.revokeKey('key_configured', iso(7))).toBe(true);
      expect(await store.revokeKey('key_configured', iso(8))).toBe(true);
      expect(await store.revokeKey('key_absent', iso(8))).toBe(false);
      const both = await ofType('key.revoked');
      expect(both.map((event) => event.resourceId)).toEqual([keyId, 'key_configured']);
      expect(both[1]!.data).toMatchObject({ label: 'ops', revoked_at: iso(7) });
    });

    it("work_unit.closed with its Runs' figures, once; outcome.reported for every revision", async () => {
      const now = Date.now();
      const at = (offset: number) => new Date(now + offset).toISOString();
      const runId = await createActiveRun(store, 'prj_events', 1000, at(-1000), at(86_400_000));
      const run = await store.getRun('prj_events', runId);
      const workUnitId = run!.workUnitId;
      await store.reserve({ ...reservation('att_wu'), runId, reservationMicrosUsd: 30 });
      await store.settle(settlement('att_wu', 12));
      const close = () =>
        store.closeWorkUnit(
          { projectId: 'prj_events', id: workUnitId, closedAt: at(10) },
          idem(),
          (unit) => unit,
        );
      expect((await close()).status).toBe(201);
      expect((await close()).status).toBe(200);
      const closed = await ofType('work_unit.closed');
      expect(closed).toHaveLength(1);
      expect(closed[0]).toMatchObject({
        resourceType: 'work_unit',
        resourceId: workUnitId,
        data: {
          work_unit_id: workUnitId,
          runs: 1,
          committed_micros_usd: 12,
          reserved_micros_usd: 0,
          unknown_attempts: 0,
        },
      });
      // an Outcome on a Work Unit with no definitions frozen is refused by checkDefinition; this one accepts any
      const report = (key: string, supersedes: string | null) =>
        store.reportOutcome(
          {
            outcome: {
              id: newId('out'),
              projectId: 'prj_events',
              workUnitId,
              definitionId: 'odef_a',
              value: 'resolved',
              reporterKeyId: 'key_a',
              observedAt: at(11),
              ingestedAt: at(12),
              evidenceRef: null,
              evidenceSha256: null,
              supersedesOutcomeId: supersedes,
            },
            maxRevisions: 20,
            writeWindowMs: 30 * 86_400_000,
            checkDefinition: () => 1,
          },
          idem(key),
          (outcome) => outcome,
        );
      const first = (await report('o1', null)).body as { id: string };
      expect((await report('o1', null)).replayed).toBe(true);
      await report('o2', first.id);
      const reported = await ofType('outcome.reported');
      expect(reported).toHaveLength(2);
      expect(reported[0]).toMatchObject({
        resourceType: 'work_unit',
        resourceId: workUnitId,
        data: {
          outcome_id: first.id,
          value: 'resolved',
          revision: 1,
          provisional: false,
          definition_id: 'odef_a',
        },
      });
      expect(reported[1]!.data).toMatchObject({ revision: 2, supersedes_outcome_id: first.id });
    });

    it('batch.finished and response.finished when the record reaches a final status, once', async () => {
      const record = { ...batch(), projectId: 'prj_events' };
      await store.batches.create(record, T0, null, () => ({}));
      await store.batches.update(record.id, ['validating'], { status: 'in_progress' });
      expect(await ofType('batch.finished')).toHaveLength(0);
      await store.batches.update(record.id, ['in_progress'], {
        status: 'completed',
        requestCounts: { total: 2, completed: 2, failed: 0 },
      });
      await store.batches.update(record.id, ['completed'], { status: 'completed' });
      const batches = await ofType('batch.finished');
      expect(batches).toHaveLength(1);
      expect(batches[0]).toMatchObject({
        projectId: 'prj_events',
        resourceType: 'batch',
        resourceId: record.id,
        data: {
          batch_id: record.id,
          status: 'completed',
          request_counts: { total: 2, completed: 2, failed: 0 },
        },
      });
      const deferred = response();
      await store.deferredResponses.create(deferred, T0);
      await store.deferredResponses.update(deferred.id, ['queued'], { status: 'in_progress' });
      await store.deferredResponses.update(deferred.id, ['in_progress'], {
        status: 'failed',
        completedAt: T0 + 9,
        error: { code: 'server_error', message: 'x' },
      });
      await store.deferredResponses.update(deferred.id, ['failed'], { firstReadAt: T0 + 10 });
      const responses = await ofType('response.finished');
      expect(responses).toHaveLength(1);
      expect(responses[0]).toMatchObject({
        projectId: deferred.projectId,
        resourceType: 'response',
        resourceId: deferred.id,
        occurredAt: iso(9),
        data: { response_id: deferred.id, status: 'failed', error_code: 'server_error' },
      });
    });

    it('run.expired and key.expired once each, by the expiry sweep, saying whether the Run had unknown attempts', async () => {
      const now = Date.now();
      const at = (offset: number) => new Date(now + offset).toISOString();
      const runId = await createActiveRun(store, 'prj_events', 1000, at(-60_000), at(1000));
      const closedRun = await createActiveRun(store, 'prj_events', 1000, at(-60_000), at(1000));
      const laterRun = await createActiveRun(store, 'prj_events', 1000, at(-60_000), at(3_600_000));
      await store.closeRun(
        { projectId: 'prj_events', id: closedRun, reason: 'done', closedAt: at(0) },
        idem(),
        (r) => r,
      );
      await store.reserve({
        ...reservation('att_unknown'),
        runId,
        reservationMicrosUsd: 40,
        now,
        createdAt: at(0),
      });
      await store.settle({
        ...settlement('att_unknown', 0),
        state: 'unknown',
        outcome: 'unknown',
        costMicrosUsd: 40,
      });
      const keyId = await createKey(store, 'prj_events', {}, at(-60_000));
      await store.keys.create(
        {
          id: 'key_expiring',
          projectId: 'prj_events',
          secretHash: 'hash-expiring',
          scopes: ['inference'],
          label: 'temp',
          createdAt: at(-60_000),
          expiresAt: at(1000),
          models: null,
          limits: {},
        },
        null,
        (key) => key,
      );
      expect(await store.events.noteExpirations(at(0), 100)).toBe(0);
      expect(await store.events.noteExpirations(at(2000), 100)).toBe(2);
      expect(await store.events.noteExpirations(at(2000), 100)).toBe(0);
      expect(await store.events.noteExpirations(at(3000), 100)).toBe(0);
      const runs = await ofType('run.expired');
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({
        resourceType: 'run',
        resourceId: runId,
        occurredAt: at(1000),
        data: { run_id: runId, committed: 40, unknown_attempts: 1, had_unknown_attempts: true, budget: 1000 },
      });
      const keys = await ofType('key.expired');
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({
        resourceId: 'key_expiring',
        data: { label: 'temp', expires_at: at(1000) },
      });
      expect(keyId).not.toBe('key_expiring');
      expect(laterRun).not.toBe(runId);
    });

    const thresholds = { run: [0.5, 0.8, 1], caps: [0.5, 0.8, 1] };
    const withThresholds = (attemptId: string, fields: Partial<ReserveInput>) =>
      ({ ...reservation(attemptId), eventThresholds: thresholds, ...fields }) as ReserveInput;
    /** An active Run of `budget`, and a reservation on it with the thresholds above. */
    const thresholdRun = async (budget: number) => {
      const now = Date.now();
      const runId = await createActiveRun(
        store,
        'prj_events',
        budget,
        new Date(now - 1000).toISOString(),
        new Date(now + 86_400_000).toISOString(),
      );
      const reserve = (id: string, amount: number) =>
        store.reserve(withThresholds(id, { runId, reservationMicrosUsd: amount, now }));
      return { runId, reserve, now };
    };

    it('run.budget_threshold once per fraction crossed by committed + reserved, with the figures; run.depleted at the first refusal for budget', async () => {
      const { runId, reserve, now } = await thresholdRun(1000);
      await reserve('att_t1', 400);
      expect(await ofType('run.budget_threshold')).toHaveLength(0);
      await reserve('att_t2', 200); // 600: crosses 0.5
      await store.settle(settlement('att_t1', 300)); // 500 (a settlement never crosses)
      await reserve('att_t3', 400); // 900: crosses 0.8
      await reserve('att_t4', 100); // 1000: crosses 1
      const crossed = await ofType('run.budget_threshold');
      expect(crossed.map((event) => event.data.threshold)).toEqual([0.5, 0.8, 1]);
      expect(crossed[0]).toMatchObject({
        projectId: 'prj_events',
        resourceType: 'run',
        resourceId: runId,
        data: { run_id: runId, budget: 1000, committed: 0, reserved: 600 },
      });
      expect(crossed[1]!.data).toMatchObject({ committed: 300, reserved: 600 });
      expect(crossed[2]!.data).toMatchObject({ committed: 300, reserved: 700 });
      expect(typeof crossed[0]!.data.work_unit_id).toBe('string');
      expect(await codeOf(reserve('att_t5', 1))).toBe('run_budget_exceeded');
      expect(await codeOf(reserve('att_t6', 5))).toBe('run_budget_exceeded');
      const depleted = await ofType('run.depleted');
      expect(depleted).toHaveLength(1);
      expect(depleted[0]).toMatchObject({
        resourceId: runId,
        data: {
          run_id: runId,
          budget: 1000,
          committed: 300,
          reserved: 700,
          remaining: 0,
          refused_reservation: 1,
        },
      });
      // without thresholds configured, nothing is compared or written
      const quiet = await createActiveRun(
        store,
        'prj_events',
        100,
        new Date(now - 1000).toISOString(),
        new Date(now + 86_400_000).toISOString(),
      );
      await store.reserve({ ...reservation('att_q1'), runId: quiet, reservationMicrosUsd: 100, now });
      expect(
        (await ofType('run.budget_threshold')).filter((event) => event.resourceId === quiet),
      ).toHaveLength(0);
    });

    it('run.budget_threshold at the level exactly, not one micro-dollar short of it, and every level one reservation passes', async () => {
      const { runId, reserve } = await thresholdRun(10_000);
      const levels = async () =>
        (await ofType('run.budget_threshold'))
          .filter((event) => event.resourceId === runId)
          .map((event) => event.data.threshold);
      await reserve('att_b1', 4_999); // one short of 0.5
      expect(await levels()).toEqual([]);
      await reserve('att_b2', 1); // 5,000: exactly 0.5
      expect(await levels()).toEqual([0.5]);
      await reserve('att_b3', 2_999); // 7,999: one short of 0.8
      expect(await levels()).toEqual([0.5]);
      await reserve('att_b4', 2_001); // 10,000: past 0.8 and exactly 1, in one reservation
      expect(await levels()).toEqual([0.5, 0.8, 1]);
    });

    it('key and Project cap thresholds once per window and fraction, keyed by the window', async () => {
      const now = Date.now();
      const day = new Date(now).toISOString().slice(0, 10);
      const keyId = await createKey(store, 'prj_events', { dayMicrosUsd: 100 }, new Date(now).toISOString());
      const reserve = (id: string, amount: number) =>
        store.reserve(
          withThresholds(id, {
            keyId,
            reservationMicrosUsd: amount,
            now,
            projectCaps: { lifetimeMicrosUsd: 1000 },
          }),
        );
      await reserve('att_c1', 40);
      await reserve('att_c2', 40); // key day 80: crosses 0.5 and 0.8
      await store.settle(settlement('att_c1', 10)); // key day 50
      await reserve('att_c3', 45); // key day 95
      await reserve('att_c4', 5); // key day 100: crosses 1
      expect(await codeOf(reserve('att_c5', 500))).toBe('key_budget_exceeded'); // nothing crosses
      const keyEvents = await ofType('key.cap_threshold');
      expect(keyEvents.map((event) => event.data.threshold)).toEqual([0.5, 0.8, 1]);
      expect(keyEvents[0]).toMatchObject({
        projectId: 'prj_events',
        resourceType: 'key',
        resourceId: keyId,
        data: { key_id: keyId, window: `day:${day}`, threshold: 0.5, cap: 100, committed: 0, reserved: 80 },
      });
      expect(keyEvents[2]!.data).toMatchObject({ committed: 10, reserved: 90 });
      const projectEvents = await ofType('project.cap_threshold');
      expect(projectEvents).toHaveLength(0);
      const other = await createKey(store, 'prj_events', {}, new Date(now).toISOString());
      await store.reserve(
        withThresholds('att_p1', {
          keyId: other,
          reservationMicrosUsd: 600,
          now,
          projectCaps: { lifetimeMicrosUsd: 1000 },
        }),
      );
      const project = await ofType('project.cap_threshold');
      expect(project).toHaveLength(1);
      expect(project[0]).toMatchObject({
        resourceType: 'project',
        resourceId: 'prj_events',
        data: { project_id: 'prj_events', window: 'lifetime', threshold: 0.5, cap: 1000 },
      });
    });

    it('attempt.unknown when a settlement commits an attempt whose cost is unknowable, once', async () => {
      await store.reserve({ ...reservation('att_u1'), reservationMicrosUsd: 70 });
      await store.reserve({ ...reservation('att_u2'), reservationMicrosUsd: 70 });
      const unknown = { ...settlement('att_u1', 0), state: 'unknown' as const, outcome: 'unknown' as const };
      await store.settle(unknown);
      await store.settle(unknown);
      await store.settle(settlement('att_u2', 3));
      const events = await ofType('attempt.unknown');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        projectId: 'prj_events',
        resourceType: 'attempt',
        resourceId: 'att_u1',
        data: { attempt_id: 'att_u1', outcome: 'unknown', committed: 70, run_id: null, key_id: 'key_a' },
      });
    });
  });
}
