/**
 * The events sweep on SQLite: notes expiries once, deletes events past the retention in bounded
 * batches, and keeps an event a webhook delivery still waits for (once the deliveries table exists).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../lib/clock.js';
import { sampleEvent } from '../store/contract/events-contract.js';
import { createActiveRun } from '../store/contract/harness.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { sweepEvents } from './sweep.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

it('notes an expired Run once, deletes old events, and keeps the ones a delivery still owes', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-events-sweep-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  const now = Date.now();
  const clock = new ManualClock(now);
  const logger = pino({ level: 'silent' });
  const runId = await createActiveRun(
    store,
    'prj_events',
    100,
    new Date(now - 60_000).toISOString(),
    new Date(now + 1000).toISOString(),
  );
  const old = new Date(now - 40 * 86_400_000).toISOString();
  const events = Array.from({ length: 3 }, () => sampleEvent({ occurredAt: old }));
  await store.events.appendEvents(events);
  clock.set(now + 2000);
  expect(await sweepEvents(store, clock, logger, { retentionDays: 30 })).toEqual({
    expirations: 1,
    deleted: 3,
  });
  expect(await sweepEvents(store, clock, logger, { retentionDays: 30 })).toEqual({
    expirations: 0,
    deleted: 0,
  });
  const left = await store.events.listEventsAfter(0, 10);
  expect(left.map((event) => [event.type, event.resourceId])).toEqual([['run.expired', runId]]);

  // A pending webhook delivery (table of migration 13) keeps its event past retention.
  const owed = sampleEvent({ occurredAt: old });
  const done = sampleEvent({ occurredAt: old });
  await store.events.appendEvents([owed, done]);
  const sequences = (await store.events.listEventsAfter(0, 10)).filter((event) => event.occurredAt === old);
  await store.close();
  const raw = new Database(path);
  raw.exec(
    `INSERT INTO webhook_endpoints (id, project_id, url, source, secret, state, created_at)
     VALUES ('whe_sweep', 'prj_a', 'https://example.com/hook', 'api', 'plain:x', 'active', '${old}')`,
  );
  const delivery = raw.prepare(
    `INSERT INTO webhook_deliveries (id, endpoint_id, project_id, event_sequence, event_id, event_type,
       resource_key, state, give_up_at, created_at) VALUES (?, 'whe_sweep', 'prj_a', ?, 'evt_x', 'run.expired', 'run:x', ?, 0, 0)`,
  );
  delivery.run('whd_owed', sequences[0]!.sequence, 'pending');
  delivery.run('whd_done', sequences[1]!.sequence, 'succeeded');
  raw.close();
  const reopened = new SqliteStore({ path, synchronous: 'normal' });
  try {
    expect((await sweepEvents(reopened, clock, logger, { retentionDays: 30 })).deleted).toBe(1);
    const kept = await reopened.events.listEventsAfter(0, 10);
    expect(kept.map((event) => event.id)).toContain(owed.id);
    expect(kept.map((event) => event.id)).not.toContain(done.id);
  } finally {
    await reopened.close();
  }
});
