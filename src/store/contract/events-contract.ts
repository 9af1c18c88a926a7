/**
 * The events outbox contract (Store.events), run unchanged against both adapters: appending, the
 * dedupe key that makes an event fire once, the global and per-Project reads, filters, paging and
 * retention.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import type { NewEvent, Store } from '../port.js';
import type { StoreHarness } from './harness.js';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();

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
  });
}
