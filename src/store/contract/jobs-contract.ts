/**
 * Contract of the jobs, batches and deferred-responses sub-ports, run unchanged against both
 * adapters: exclusive claims (also when raced), lease expiry and reclaim, lease ownership, the
 * SQLite restart reclaim, batch creation with idempotency, and conditional state changes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { BatchRecord } from '../batches-port.js';
import type { DeferredResponseRecord } from '../deferred-responses-port.js';
import type { Idempotency } from '../port.js';
import type { StoreHarness } from './harness.js';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const PROJECT = 'prj_jobs';
const PRICE = { inputPerMtok: 1, outputPerMtok: 1, cacheWritePerMtok: 0, cacheReadPerMtok: 0, requestFee: 0 };

export function batch(id = newId('batch'), projectId = PROJECT): BatchRecord {
  return {
    id,
    projectId,
    keyId: 'key_a',
    runId: null,
    connection: 'sim',
    carrier: 'message-batches',
    endpoint: '/v1/messages',
    inputFileId: 'file_x',
    completionWindow: '24h',
    status: 'validating',
    outputFileId: null,
    errorFileId: null,
    createdAt: T0,
    expiresAt: T0 + 86_400_000,
    inProgressAt: null,
    finalizingAt: null,
    completedAt: null,
    failedAt: null,
    expiredAt: null,
    cancellingAt: null,
    cancelledAt: null,
    metadata: { a: 'b' },
    errors: null,
    requestCounts: { total: 1, completed: 0, failed: 0 },
    deleteAfter: T0 + 7 * 86_400_000,
    upstreamBatchId: null,
    upstreamInputFileId: null,
    submitStartedAt: null,
    attemptId: newId('att'),
    reservationMicrosUsd: 10,
    lines: [{ customId: 'c', alias: 'm', upstreamModel: 'u', price: PRICE, worstCaseMicrosUsd: 10 }],
  };
}

export function response(id = newId('resp')): DeferredResponseRecord {
  return {
    id,
    projectId: PROJECT,
    keyId: 'key_a',
    runId: null,
    connection: 'sim',
    model: 'm',
    upstreamModel: 'u',
    status: 'queued',
    createdAt: T0,
    startedAt: null,
    completedAt: null,
    error: null,
    usage: null,
    requestObject: `${id}.request`,
    resultObject: null,
    price: PRICE,
    attemptId: newId('att'),
    reservationMicrosUsd: 5,
    firstReadAt: null,
    reapAt: T0 + 86_400_000,
  };
}

let keys = 0;
function idem(fingerprint = 'f'): Idempotency {
  return {
    projectId: PROJECT,
    keyId: 'key_a',
    key: `jobs-${++keys}`,
    fingerprint,
    createdAt: new Date(T0).toISOString(),
    expiresAt: new Date(T0 + 86_400_000).toISOString(),
  };
}

export function defineJobsContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`jobs, batches and deferred responses contract: ${name}`, () => {
    let harness: StoreHarness;
    beforeEach(async () => {
      harness = await open();
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    it('claims a due job once, holds it for its lease, and gives it back when the lease passes', async () => {
      const { jobs } = harness.store;
      await jobs.enqueue({ kind: 'batch', resourceId: 'batch_1', runAfter: T0 });
      await jobs.enqueue({ kind: 'batch', resourceId: 'batch_1', runAfter: T0 + 999 }); // same job: no-op
      await jobs.enqueue({ kind: 'response', resourceId: 'resp_later', runAfter: T0 + 10_000 });
      const claimed = await jobs.claim({ owner: 'w1', now: T0, leaseMs: 1000 });
      expect(claimed).toMatchObject({
        id: 'batch:batch_1',
        kind: 'batch',
        resourceId: 'batch_1',
        leaseOwner: 'w1',
        leaseExpiresAt: T0 + 1000,
        attempts: 1,
      });
      expect(await jobs.claim({ owner: 'w2', now: T0 + 500, leaseMs: 1000 })).toBeUndefined();
      expect(await jobs.renew('batch:batch_1', 'w2', T0 + 5000)).toBe(false);
      expect(await jobs.renew('batch:batch_1', 'w1', T0 + 2000)).toBe(true);
      expect(await jobs.claim({ owner: 'w2', now: T0 + 1500, leaseMs: 1000 })).toBeUndefined();
      const reclaimed = await jobs.claim({ owner: 'w2', now: T0 + 2000, leaseMs: 1000 });
      expect(reclaimed).toMatchObject({ id: 'batch:batch_1', leaseOwner: 'w2', attempts: 2 });
      expect(await jobs.complete('batch:batch_1', 'w1')).toBe(false);
      expect(await jobs.release('batch:batch_1', 'w2', T0 + 3000)).toBe(true);
      expect(await jobs.claim({ owner: 'w3', now: T0 + 2999, leaseMs: 1000 })).toBeUndefined();
      expect(await jobs.claim({ owner: 'w3', now: T0 + 3000, leaseMs: 1000 })).toMatchObject({
        id: 'batch:batch_1',
        leaseOwner: 'w3',
      });
      expect(await jobs.complete('batch:batch_1', 'w3')).toBe(true);
      expect(await jobs.get('batch:batch_1')).toMatchObject({ state: 'done', leaseOwner: null });
      expect(await jobs.claim({ owner: 'w3', now: T0 + 9999, leaseMs: 1000 })).toBeUndefined();
      expect(await jobs.claim({ owner: 'w3', now: T0 + 10_000, leaseMs: 1000 })).toMatchObject({
        id: 'response:resp_later',
      });
    });

    it('hands each of 20 jobs to exactly one of 40 racing claims', async () => {
      const { jobs } = harness.store;
      for (let index = 0; index < 20; index++)
        await jobs.enqueue({ kind: 'response', resourceId: `resp_${index}`, runAfter: T0 });
      const claims = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          jobs.claim({ owner: `w${index}`, now: T0, leaseMs: 60_000 }),
        ),
      );
      const ids = claims.filter((claim) => claim !== undefined).map((claim) => claim!.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it('releases the leases of a previous process (restart on SQLite)', async () => {
      const { jobs } = harness.store;
      await jobs.enqueue({ kind: 'batch', resourceId: 'batch_dead', runAfter: T0 });
      await jobs.claim({ owner: 'dead', now: T0, leaseMs: 3_600_000 });
      expect(await jobs.releaseForeignLeases('alive')).toBe(1);
      expect(await jobs.claim({ owner: 'alive', now: T0 + 1, leaseMs: 1000 })).toMatchObject({
        id: 'batch:batch_dead',
        leaseOwner: 'alive',
      });
      expect(await jobs.releaseForeignLeases('alive')).toBe(0);
    });

    it('creates a batch with its job and idempotency record in one transaction; replays and conflicts', async () => {
      const { batches, jobs } = harness.store;
      const key = idem('same');
      const first = await batches.create(batch(), T0, key, (record) => ({ id: record.id }));
      expect(first).toMatchObject({ status: 200, replayed: false });
      const id = (first.body as { id: string }).id;
      expect(await jobs.get(`batch:${id}`)).toMatchObject({ state: 'pending', runAfter: T0 });
      expect(await batches.findIdempotent(key)).toEqual({ status: 200, replayed: true, body: { id } });
      const replay = await batches.create(batch(), T0, key, (record) => ({ id: record.id }));
      expect(replay).toEqual({ status: 200, replayed: true, body: { id } });
      await expect(
        batches.create(batch(), T0, { ...key, fingerprint: 'other' }, () => ({})),
      ).rejects.toSatisfy((error) => error instanceof GatewayError && error.code === 'idempotency_conflict');
      expect(await batches.get(PROJECT, id)).toMatchObject({
        id,
        status: 'validating',
        metadata: { a: 'b' },
      });
      expect(await batches.get('prj_other', id)).toBeUndefined();
    });

    it("creates a batch without an idempotency key, and lists a Project's live batches newest first, paged", async () => {
      const { batches, jobs } = harness.store;
      const made: BatchRecord[] = [];
      for (const offset of [1000, 2000, 2000, 3000]) {
        const record = { ...batch(), createdAt: T0 + offset };
        expect(await batches.create(record, T0, null, (each) => ({ id: each.id }))).toEqual({
          status: 200,
          replayed: false,
          body: { id: record.id },
        });
        made.push(record);
      }
      expect(await jobs.get(`batch:${made[0]!.id}`)).toMatchObject({ state: 'pending' });
      await batches.create({ ...batch(undefined, 'prj_other'), createdAt: T0 + 2500 }, T0, null, () => ({}));
      const gone = { ...batch(), createdAt: T0 + 4000, deleteAfter: T0 + 5000 };
      await batches.create(gone, T0, null, () => ({}));
      const newest = [...made]
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .map((record) => record.id);
      const now = T0 + 6000;
      const ids = (rows: BatchRecord[]) => rows.map((record) => record.id);
      expect(ids(await batches.list(PROJECT, { limit: 10, now }))).toEqual(newest);
      const paged: string[] = [];
      let after: BatchRecord | undefined;
      for (;;) {
        const page = await batches.list(PROJECT, { limit: 3, after, now });
        paged.push(...ids(page));
        if (page.length < 3) break;
        after = page.at(-1);
      }
      expect(paged).toEqual(newest);
      expect(ids(await batches.list(PROJECT, { limit: 10, now: T0 }))).toEqual([gone.id, ...newest]);
    });

    it('changes a batch only from the expected status, and lists and deletes expired ones', async () => {
      const { batches } = harness.store;
      const record = batch();
      await batches.create(record, T0, idem(), () => ({}));
      expect(await batches.update(record.id, ['in_progress'], { status: 'cancelling' })).toBeUndefined();
      expect(
        await batches.update(record.id, ['validating'], { status: 'in_progress', upstreamBatchId: 'up_1' }),
      ).toMatchObject({
        status: 'in_progress',
        upstreamBatchId: 'up_1',
      });
      const raced = await Promise.all([
        batches.update(record.id, ['in_progress'], { status: 'cancelling' }),
        batches.update(record.id, ['in_progress'], { status: 'finalizing' }),
      ]);
      expect(raced.filter((result) => result !== undefined)).toHaveLength(1);
      expect(await batches.listExpired(record.deleteAfter - 1, 10)).toEqual([]);
      expect((await batches.listExpired(record.deleteAfter, 10)).map((item) => item.id)).toEqual([record.id]);
      await batches.delete(record.id);
      expect(await batches.getById(record.id)).toBeUndefined();
    });

    it('moves a deferred response by conditional updates and deletes only a finished one', async () => {
      const { deferredResponses, jobs } = harness.store;
      const record = response();
      await deferredResponses.create(record, T0);
      expect(await jobs.get(`response:${record.id}`)).toMatchObject({ state: 'pending' });
      expect(await deferredResponses.get('prj_other', record.id)).toBeUndefined();
      expect(await deferredResponses.deleteFinished(PROJECT, record.id)).toBeUndefined();
      const raced = await Promise.all([
        deferredResponses.update(record.id, ['queued'], { status: 'in_progress', startedAt: T0 }),
        deferredResponses.update(record.id, ['queued'], { status: 'cancelled' }),
      ]);
      expect(raced.filter((result) => result !== undefined)).toHaveLength(1);
      const current = (await deferredResponses.getById(record.id))!;
      if (current.status === 'in_progress')
        await deferredResponses.update(record.id, ['in_progress'], {
          status: 'completed',
          completedAt: T0 + 1,
        });
      expect(
        await deferredResponses.update(record.id, ['completed', 'cancelled'], {
          firstReadAt: T0 + 2,
          reapAt: T0 + 900_002,
        }),
      ).toMatchObject({
        reapAt: T0 + 900_002,
      });
      expect(await deferredResponses.listDue(T0 + 900_001, 10)).toEqual([]);
      expect((await deferredResponses.listDue(T0 + 900_002, 10)).map((item) => item.id)).toEqual([record.id]);
      expect(await deferredResponses.deleteFinished('prj_other', record.id)).toBeUndefined();
      expect((await deferredResponses.deleteFinished(PROJECT, record.id))?.id).toBe(record.id);
      expect(await deferredResponses.getById(record.id)).toBeUndefined();
      expect(await jobs.get(`response:${record.id}`)).toBeUndefined();
    });
  });
}
