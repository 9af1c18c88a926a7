/**
 * POST/GET/DELETE /v1/responses and /cancel with the official vendorb SDK (npm `openai`) against
 * a simulator-backed gateway: synchronous (never stored) and background (stored, run as a job,
 * request and result sealed), the deferred-response state table of SPEC.md section 3 row by row
 * on an injectable clock (15-minute and 24-hour reaping), the ledger per row, and Project isolation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { objectsFolder } from '../../src/objects/open-objects.js';
import { type DeferredWorld, eventually, startDeferredWorld } from '../support/deferred-gateway.js';
import { call } from '../support/gateway.js';

let world: DeferredWorld;
let keyA: string;
let keyB: string;
const clock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
const MINUTE = 60_000;

async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; code: unknown; headers: Headers | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) {
      return {
        status: error.status ?? 0,
        code: (error.error as { code?: unknown } | undefined)?.code,
        headers: error.headers,
      };
    }
    throw error;
  }
  throw new Error('expected the call to fail');
}

async function attempt(id: string) {
  const audit = await world.gateway.store.listAudit({ limit: 1000 });
  return audit.find((entry) => entry.attemptId === id);
}

function objectPath(id: string, suffix: string): string {
  return join(objectsFolder(world.gateway.config), 'prj_a', `${id}.${suffix}`);
}

beforeAll(async () => {
  world = await startDeferredWorld({ clock, jobs: { concurrency: 1 } });
  keyA = await world.gateway.key('prj_a', ['inference']);
  keyB = await world.gateway.key('prj_b', ['inference']);
});
afterAll(async () => world?.close());

describe('synchronous responses', () => {
  it('are served, settled from the usage, and never stored', async () => {
    const client = world.client(keyA);
    const { data, response } = await client.responses
      .create({ model: 'resp-model', input: 'Say hello', max_output_tokens: 64 })
      .withResponse();
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'resp-model',
      background: false,
    });
    expect(data.id).toMatch(/^resp_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(data.output_text).toBe('Hello from the simulator.');
    const upstream = world.sim.requests({ wire: 'responses' }).at(-1)!.body as Record<string, unknown>;
    expect(upstream).toMatchObject({ model: 'sim-resp-1', store: false, max_output_tokens: 64 });
    expect(upstream).not.toHaveProperty('background');
    const entry = await attempt(response.headers.get('svc-attempt-id')!);
    expect(entry).toMatchObject({ state: 'settled', endpoint: '/v1/responses', upstreamModel: 'sim-resp-1' });
    const usage = data.usage!;
    expect(entry!.costMicrosUsd).toBe(usage.input_tokens + 2 * usage.output_tokens);
    expect((await failure(client.responses.retrieve(data.id))).status).toBe(404);
  });

  it('refuses unknown fields, stateful fields and a missing output bound before any upstream call', async () => {
    const before = world.sim.requests({ wire: 'responses' }).length;
    const client = world.client(keyA);
    const refused = [
      { model: 'resp-model', input: 'x', max_output_tokens: 5, frobnicate: true },
      { model: 'resp-model', input: 'x', max_output_tokens: 5, previous_response_id: 'resp_x' },
      { model: 'resp-model', input: 'x' },
    ];
    for (const body of refused) {
      expect((await failure(client.responses.create(body as never))).status).toBe(400);
    }
    const route = await failure(
      client.responses.create(
        { model: 'resp-model', input: 'x', max_output_tokens: 5 },
        { headers: { 'Svc-Route': 'sim-chat' } },
      ),
    );
    expect(route.status).toBe(400);
    expect(world.sim.requests({ wire: 'responses' })).toHaveLength(before);
  });
});

describe('deferred responses: SPEC section 3, row by row', () => {
  it('runs a background response as a job, keeps request and result sealed, and answers Retry-After only while owed', async () => {
    const client = world.client(keyA);
    const { data: created, response } = await client.responses
      .create({ model: 'resp-model', input: 'A secret prompt', max_output_tokens: 64, background: true })
      .withResponse();
    expect(created).toMatchObject({
      object: 'response',
      status: 'queued',
      background: true,
      output: [],
      usage: null,
    });
    const done = await eventually(
      () => client.responses.retrieve(created.id),
      (value) => value.status === 'completed',
    );
    expect(done.output_text).toBe('Hello from the simulator.');
    expect(done.usage!.output_tokens).toBeGreaterThan(0);
    const raw = await call(world.gateway.url, 'GET', `/v1/responses/${created.id}`, { key: keyA });
    expect(raw.headers.get('retry-after')).toBeNull();
    for (const suffix of ['request', 'result']) {
      expect(existsSync(objectPath(created.id, suffix))).toBe(true);
      expect(readFileSync(objectPath(created.id, suffix)).includes('secret')).toBe(false);
      expect(readFileSync(objectPath(created.id, suffix)).includes('simulator')).toBe(false);
    }
    const settled = await attempt(response.headers.get('svc-attempt-id')!);
    expect(settled).toMatchObject({ state: 'settled', endpoint: '/v1/responses' });
    expect(settled!.costMicrosUsd).toBe(done.usage!.input_tokens + 2 * done.usage!.output_tokens);
    // Retrieval writes no ledger event.
    const auditBefore = (await world.gateway.store.listAudit({ limit: 1000 })).length;
    await client.responses.retrieve(created.id);
    expect((await world.gateway.store.listAudit({ limit: 1000 })).length).toBe(auditBefore);
  });

  it('queued: cancel is determinate; running: cancel is conservative; finished: 409; DELETE owed: 409', async () => {
    const client = world.client(keyA);
    world.sim.setBehaviour({ latencyMs: 60_000 }, { model: 'sim-slow' });
    const running = await client.responses
      .create({ model: 'resp-slow', input: 'slow', max_output_tokens: 32, background: true })
      .withResponse();
    await eventually(
      () => client.responses.retrieve(running.data.id),
      (value) => value.status === 'in_progress',
    );
    // One job at a time (concurrency 1): the next one waits in the queue.
    const queued = await client.responses
      .create({ model: 'resp-model', input: 'wait', max_output_tokens: 32, background: true })
      .withResponse();
    const waiting = await call(world.gateway.url, 'GET', `/v1/responses/${queued.data.id}`, { key: keyA });
    expect(waiting.body.status).toBe('queued');
    expect(waiting.headers.get('retry-after')).toBe('2');
    const inProgress = await call(world.gateway.url, 'GET', `/v1/responses/${running.data.id}`, {
      key: keyA,
    });
    expect(inProgress.headers.get('retry-after')).toBe('2');

    // DELETE while an answer is owed: 409, cancel first.
    for (const id of [queued.data.id, running.data.id]) {
      const refused = await failure(client.responses.delete(id));
      expect(refused).toMatchObject({ status: 409, code: 'resource_conflict' });
      expect(refused.headers?.get('x-should-retry')).toBe('false');
    }

    const cancelledQueued = await client.responses.cancel(queued.data.id);
    expect(cancelledQueued).toMatchObject({ status: 'cancelled', error: null });
    expect(await attempt(queued.response.headers.get('svc-attempt-id')!)).toMatchObject({
      state: 'released',
      outcome: 'not_sent',
      costMicrosUsd: 0,
    });

    const cancelledRunning = await client.responses.cancel(running.data.id);
    expect(cancelledRunning.status).toBe('cancelled');
    expect(cancelledRunning.error?.message).toMatch(/may have billed/);
    const committed = await attempt(running.response.headers.get('svc-attempt-id')!);
    expect(committed).toMatchObject({ state: 'unknown', outcome: 'cancelled_running' });
    expect(committed!.costMicrosUsd).toBe(committed!.reservationMicrosUsd);

    // finished (cancelled, completed): cancel is 409.
    expect(await failure(client.responses.cancel(running.data.id))).toMatchObject({
      status: 409,
      code: 'resource_conflict',
    });
    world.sim.reset();
    const finished = await client.responses.create({
      model: 'resp-model',
      input: 'done',
      max_output_tokens: 16,
      background: true,
    });
    await eventually(
      () => client.responses.retrieve(finished.id),
      (value) => value.status === 'completed',
    );
    expect(await failure(client.responses.cancel(finished.id))).toMatchObject({
      status: 409,
      code: 'resource_conflict',
    });
    // The cancelled running call ended upstream-side too: the worker is free again.
    expect((await client.responses.retrieve(running.data.id)).status).toBe('cancelled');
  });

  it('finished: DELETE removes the record and both sealed objects, accounting untouched', async () => {
    const client = world.client(keyA);
    const created = await client.responses
      .create({ model: 'resp-model', input: 'to delete', max_output_tokens: 16, background: true })
      .withResponse();
    await eventually(
      () => client.responses.retrieve(created.data.id),
      (value) => value.status === 'completed',
    );
    const before = await attempt(created.response.headers.get('svc-attempt-id')!);
    const audit = (await world.gateway.store.listAudit({ limit: 1000 })).length;
    const deleted = await call(world.gateway.url, 'DELETE', `/v1/responses/${created.data.id}`, {
      key: keyA,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.data.id, object: 'response', deleted: true });
    await client.responses.delete(created.data.id).then(
      () => expect.fail('second delete must fail'),
      (error: unknown) => expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(404),
    );
    expect(existsSync(objectPath(created.data.id, 'request'))).toBe(false);
    expect(existsSync(objectPath(created.data.id, 'result'))).toBe(false);
    expect(await attempt(created.response.headers.get('svc-attempt-id')!)).toEqual(before);
    expect((await world.gateway.store.listAudit({ limit: 1000 })).length).toBe(audit);
  });

  it('reaps a finished response 15 minutes after its first successful GET', async () => {
    const client = world.client(keyA);
    const created = await client.responses.create({
      model: 'resp-model',
      input: 'reap me',
      max_output_tokens: 16,
      background: true,
    });
    // Polling while queued or running does not start the 15 minutes.
    await eventually(
      () => client.responses.retrieve(created.id),
      (value) => value.status === 'completed',
    );
    clock.advance(14 * MINUTE);
    expect((await client.responses.retrieve(created.id)).status).toBe('completed');
    clock.advance(MINUTE - 1);
    expect((await client.responses.retrieve(created.id)).status).toBe('completed');
    clock.advance(1);
    expect((await failure(client.responses.retrieve(created.id))).status).toBe(404);
    await eventually(
      async () => existsSync(objectPath(created.id, 'result')),
      (present) => !present,
    );
  });

  it('reaps any stored response at 24 hours when that comes first', async () => {
    const client = world.client(keyA);
    const unread = await client.responses.create({
      model: 'resp-model',
      input: 'never read',
      max_output_tokens: 16,
      background: true,
    });
    const late = await client.responses.create({
      model: 'resp-model',
      input: 'read late',
      max_output_tokens: 16,
      background: true,
    });
    await eventually(
      () => world.gateway.store.deferredResponses.getById(late.id),
      (record) => record?.status === 'completed',
    );
    await eventually(
      () => world.gateway.store.deferredResponses.getById(unread.id),
      (record) => record?.status === 'completed',
    );
    clock.advance(24 * 60 * MINUTE - 10 * MINUTE);
    expect((await client.responses.retrieve(late.id)).status).toBe('completed'); // first read: 15 min would pass the 24 h
    clock.advance(10 * MINUTE);
    expect((await failure(client.responses.retrieve(late.id))).status).toBe(404);
    expect((await failure(client.responses.retrieve(unread.id))).status).toBe(404);
  });

  it("answers another Project's ids exactly like unknown ones", async () => {
    const owner = world.client(keyA);
    const stranger = world.client(keyB);
    const created = await owner.responses.create({
      model: 'resp-model',
      input: 'mine',
      max_output_tokens: 16,
      background: true,
    });
    await eventually(
      () => owner.responses.retrieve(created.id),
      (value) => value.status === 'completed',
    );
    const unknown = 'resp_00000000000000000000000000';
    for (const operation of [
      (id: string) => stranger.responses.retrieve(id),
      (id: string) => stranger.responses.cancel(id),
      (id: string) => stranger.responses.delete(id),
    ]) {
      const theirs = await failure(operation(created.id));
      const missing = await failure(operation(unknown));
      expect(theirs.status).toBe(404);
      expect({ status: theirs.status, code: theirs.code }).toEqual({
        status: missing.status,
        code: missing.code,
      });
    }
    expect((await owner.responses.retrieve(created.id)).status).toBe('completed');
  });
});
