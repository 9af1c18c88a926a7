import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../lib/clock.js';
import type { JobRecord } from '../store/jobs-port.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { type JobHandler, JobWorker } from './worker.js';

const settings = { pollIntervalMs: 5, leaseMs: 300, concurrency: 2, reclaimOnStart: true };
const logger = pino({ level: 'silent' });

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('JobWorker', () => {
  let folder: string;
  let store: SqliteStore;
  const clock = new ManualClock();
  const workers: JobWorker[] = [];

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'svc-worker-'));
    store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
    await store.migrate();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function worker(handler: JobHandler): JobWorker {
    const created = new JobWorker(store.jobs, { batch: handler, response: handler }, clock, logger, settings);
    workers.push(created);
    return created;
  }

  it('runs a job, reschedules it when asked, and completes it', async () => {
    const runs: number[] = [];
    await store.jobs.enqueue({ kind: 'batch', resourceId: 'batch_1', runAfter: clock.now() });
    await worker(async (job: JobRecord) => {
      runs.push(job.attempts);
      return runs.length < 3 ? { kind: 'retry', afterMs: 0 } : { kind: 'done' };
    }).start();
    await until(async () => (await store.jobs.get('batch:batch_1'))?.state === 'done');
    expect(runs).toEqual([1, 2, 3]);
  });

  it('retries a handler that throws, with backoff on the injected clock', async () => {
    let calls = 0;
    await store.jobs.enqueue({ kind: 'response', resourceId: 'resp_1', runAfter: clock.now() });
    await worker(async () => {
      calls += 1;
      if (calls === 1) throw new Error('transient');
      return { kind: 'done' };
    }).start();
    await until(() => calls === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(1); // backoff: run_after = now + attempts x poll interval on the manual clock
    clock.advance(settings.pollIntervalMs);
    await until(async () => (await store.jobs.get('response:resp_1'))?.state === 'done');
    expect(calls).toBe(2);
  });

  it('keeps its lease while the handler works, and aborts the handler on stop', async () => {
    let aborted = false;
    await store.jobs.enqueue({ kind: 'batch', resourceId: 'batch_long', runAfter: clock.now() });
    const first = worker(
      (_job, context) =>
        new Promise((resolve) => {
          context.signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ kind: 'done' });
          });
        }),
    );
    await first.start();
    await until(async () => (await store.jobs.get('batch:batch_long'))?.leaseOwner === first.owner);
    expect(await store.jobs.claim({ owner: 'other', now: clock.now(), leaseMs: 100 })).toBeUndefined();
    await first.stop();
    expect(aborted).toBe(true);
    // Stopped mid-job: nothing recorded, the job stays pending for the next owner.
    expect((await store.jobs.get('batch:batch_long'))?.state).toBe('pending');
  });

  it('runs a sweep once per interval across several workers on one store (a leased job, not a timer each)', async () => {
    let passes = 0;
    const sweep = {
      name: 'objects',
      intervalMs: 1000,
      run: async () => {
        passes += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    };
    const replicas = [1, 2, 3].map(() => {
      const created = new JobWorker(
        store.jobs,
        { batch: async () => ({ kind: 'done' }), response: async () => ({ kind: 'done' }) },
        clock,
        logger,
        { ...settings, reclaimOnStart: false },
        [sweep],
      );
      workers.push(created);
      return created;
    });
    for (const replica of replicas) await replica.start();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(passes).toBe(0); // the first pass is one interval after the first start
    clock.advance(1000);
    await until(() => passes === 1);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(passes).toBe(1);
    clock.advance(1000);
    await until(() => passes === 2);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(passes).toBe(2);
    expect((await store.jobs.get('sweep:objects'))?.state).toBe('pending');
  });
});
