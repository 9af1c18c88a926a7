/**
 * Threshold events on two PostgreSQL replicas under concurrency: many parallel reservations and
 * settlements on one Run, from two stores sharing one database, through both ledger paths (the
 * one-statement function for uncapped calls, ledger-batch.ts for calls on a capped key). Each Run
 * threshold, each cap threshold and run.depleted must be written exactly once, even though
 * settlements below the reservation bring committed + reserved back under thresholds already crossed.
 * Also: the retention keeps an event a webhook delivery still owes (webhook_deliveries, migration 13).
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createTestDatabase, describePostgres } from '../../../test/support/postgres.js';
import { sampleEvent } from '../contract/events-contract.js';
import {
  codeOf,
  completedSettlement,
  createActiveRun,
  createKey,
  plainReservation,
} from '../contract/harness.js';
import type { EventRecord } from '../port.js';
import { PostgresStore } from './postgres-store.js';

describePostgres('events on two PostgreSQL replicas', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('fires every threshold and run.depleted exactly once under parallel calls from both replicas', async () => {
    const database = await createTestDatabase();
    closers.push(() => database.drop());
    const replicas = [0, 1].map(() => {
      const store = new PostgresStore({ connectionString: database.url, poolMax: 8 });
      closers.push(() => store.close());
      return store;
    });
    const [first, second] = replicas as [PostgresStore, PostgresStore];
    await first.migrate();
    await second.migrate();
    const now = Date.now();
    const iso = (offset: number) => new Date(now + offset).toISOString();
    const projectId = 'prj_replicas';
    const runId = await createActiveRun(first, projectId, 10_000, iso(-1000), iso(3_600_000));
    const cappedKey = await createKey(first, projectId, { dayMicrosUsd: 6000 }, iso(0));
    const thresholds = { run: [0.5, 0.8, 1], caps: [0.5, 0.8, 1] };

    // Calls on the Run (uncapped key: the one-statement function) and calls on the capped key
    // without a Run (ledger-batch.ts), alternating between the replicas, all in parallel.
    const call = async (index: number, onRun: boolean, cost: number) => {
      const store = replicas[index % 2]!;
      const attemptId = `att_rep_${index}`;
      const code = await codeOf(
        store.reserve(
          plainReservation(attemptId, {
            projectId,
            runId: onRun ? runId : null,
            keyId: onRun ? 'key_uncapped' : cappedKey,
            reservationMicrosUsd: 50,
            now,
            eventThresholds: thresholds,
          }),
        ),
      );
      if (code === 'ok') await store.settle(completedSettlement(attemptId, { costMicrosUsd: cost }));
      return { onRun, code };
    };
    // Wave 1 settles below the reservations: the Run peaks at 5000 reserved (crossing 0.5) and falls
    // back to 4000 committed, so wave 2 crosses 0.5 again; only the first crossing is written.
    // Wave 2 settles at the reservation, so the Run (4000 + 120 x 50) and the key (1600 + 88 x 50)
    // reach their limits exactly, and the rest are refused.
    const wave = (from: number, runCalls: number, keyCalls: number, cost: number) =>
      Promise.all([
        ...Array.from({ length: runCalls }, (_, index) => call(from + index, true, cost)),
        ...Array.from({ length: keyCalls }, (_, index) => call(from + runCalls + index, false, cost)),
      ]);
    const firstWave = await wave(0, 100, 40, 40);
    expect(firstWave.every((outcome) => outcome.code === 'ok')).toBe(true);
    const secondWave = await wave(1000, 200, 100, 50);
    const admitted = (onRun: boolean) =>
      secondWave.filter((outcome) => outcome.onRun === onRun && outcome.code === 'ok').length;
    expect(admitted(true)).toBe(120);
    expect(admitted(false)).toBe(88);
    expect(secondWave.map((outcome) => outcome.code)).toContain('run_budget_exceeded');
    expect(secondWave.map((outcome) => outcome.code)).toContain('key_budget_exceeded');

    const events: EventRecord[] = await first.events.listEvents(projectId, { limit: 1000 });
    const of = (type: string, resourceId: string) =>
      events
        .filter((event) => event.type === type && event.resourceId === resourceId)
        .map((event) => event.data.threshold ?? 'once');
    expect(of('run.budget_threshold', runId).sort()).toEqual([0.5, 0.8, 1]);
    expect(of('run.depleted', runId)).toEqual(['once']);
    expect(of('key.cap_threshold', cappedKey).sort()).toEqual([0.5, 0.8, 1]);
    const run = await second.getRun(projectId, runId);
    expect(run!.reservedMicrosUsd).toBe(0);
    // The second replica reads the same outbox, in the same order.
    expect((await second.events.listEventsAfter(0, 1000)).map((event) => event.id)).toEqual(
      events.map((event) => event.id),
    );
  }, 60_000);

  it('retention keeps an event a webhook delivery still owes', async () => {
    const database = await createTestDatabase();
    closers.push(() => database.drop());
    const store = new PostgresStore({ connectionString: database.url });
    closers.push(() => store.close());
    await store.migrate();
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const [owed, done] = [sampleEvent({ occurredAt: old }), sampleEvent({ occurredAt: old })];
    await store.events.appendEvents([owed, done]);
    const [first, second] = await store.events.listEventsAfter(0, 10);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO webhook_endpoints (id, project_id, url, source, secret, state, created_at)
         VALUES ('whe_retention', 'prj_a', 'https://example.com/hook', 'api', 'plain:x', 'active', now())`,
      );
      await client.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, project_id, event_sequence, event_id, event_type,
           resource_key, state, give_up_at, created_at)
         VALUES ('whd_owed', 'whe_retention', 'prj_a', $1, 'evt_x', 'run.expired', 'run:x', 'delivering', 0, 0),
                ('whd_done', 'whe_retention', 'prj_a', $2, 'evt_y', 'run.expired', 'run:y', 'failed', 0, 0)`,
        [first!.sequence, second!.sequence],
      );
    } finally {
      await client.end();
    }
    expect(await store.events.deleteEventsBefore(new Date().toISOString(), 100)).toBe(1);
    expect((await store.events.listEventsAfter(0, 10)).map((event) => event.id)).toEqual([owed.id]);
  });
});
