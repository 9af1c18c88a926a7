/**
 * Idempotency of governance POSTs (SPEC 4, DESIGN 3): 201 first, 200 replay with the same body,
 * canonical body comparison, 409 idempotency_conflict for a different body or path, scope per
 * Gateway Key, only successes stored, and the Idempotency-Key header rules (400 invalid_idempotency_key).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  Api,
  describeEachStore,
  expectSvcError,
  newIdempotencyKey,
  rawRequest,
  resolvedOutcome,
} from './support.js';

describeEachStore('governance: idempotency', (kind) => {
  let gateway: TestGateway;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('every governance POST: 201 first, 200 replay with an identical body, one resource', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const writes: Array<[string, unknown]> = [
      ['/svc/v1/work-units', { outcome_definition_ids: ['odef_resolved'] }],
      ['/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: 5 }],
      [`/svc/v1/work-units/${unit.id}/outcomes`, resolvedOutcome(true)],
      [`/svc/v1/runs/${run.id}/close`, { reason: 'done' }],
      [`/svc/v1/work-units/${unit.id}/close`, {}],
    ];
    for (const [path, body] of writes) {
      const key = newIdempotencyKey();
      const first = await api.post(path, body, key);
      const replay = await api.post(path, body, key);
      expect([path, first.status, replay.status]).toEqual([path, 201, 200]);
      expect(replay.body).toEqual(first.body);
      expect(replay.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
    }
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.runs).toHaveLength(2);
    expect(view.outcomes).toHaveLength(1);
  });

  it('key order and whitespace of the body do not matter', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    const first = await call(gateway.url, 'POST', '/svc/v1/runs', {
      key: api.key,
      idempotencyKey: key,
      rawBody: `{"work_unit_id":"${unit.id}","budget_micros_usd":10,"ttl_seconds":60}`,
      headers: { 'content-type': 'application/json' },
    });
    const replay = await call(gateway.url, 'POST', '/svc/v1/runs', {
      key: api.key,
      idempotencyKey: key,
      rawBody: `\n{ "ttl_seconds" : 60,\n  "budget_micros_usd": 10 ,\t"work_unit_id": "${unit.id}" }\n`,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect([first.status, replay.status]).toEqual([201, 200]);
    expect(replay.body).toEqual(first.body);
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toHaveLength(1);
  });

  it('same key with a different body: 409 idempotency_conflict, nothing written', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    expect(
      (await api.post('/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: 10 }, key)).status,
    ).toBe(201);
    const conflict = await api.post('/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: 11 }, key);
    expectSvcError(conflict, 409, 'idempotency_conflict');
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toHaveLength(1);
  });

  it('same key and body on a different path: 409 idempotency_conflict', async () => {
    const first = await api.createWorkUnit();
    const second = await api.createWorkUnit();
    const key = newIdempotencyKey();
    expect((await api.post(`/svc/v1/work-units/${first.id}/close`, {}, key)).status).toBe(201);
    expectSvcError(
      await api.post(`/svc/v1/work-units/${second.id}/close`, {}, key),
      409,
      'idempotency_conflict',
    );
    expect((await api.get(`/svc/v1/work-units/${second.id}`)).body.work_unit.status).toBe('open');
    // ... and across endpoints with the same body.
    expectSvcError(await api.post('/svc/v1/work-units', {}, key), 409, 'idempotency_conflict');
  });

  it('the replay returns the stored response even after the resource changed', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    const created = await api.post('/svc/v1/runs', { work_unit_id: unit.id }, key);
    await api.post(`/svc/v1/runs/${created.body.id}/close`, {});
    const replay = await api.post('/svc/v1/runs', { work_unit_id: unit.id }, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(created.body);
    expect(replay.body.status).toBe('active');
  });

  it('a replay is answered from the stored response, before the rules that would now refuse the write', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    const created = await api.post('/svc/v1/runs', { work_unit_id: unit.id }, key);
    expect(created.status).toBe(201);
    await api.closeWorkUnit(unit.id);
    // A new Run is refused now ...
    expectSvcError(await api.post('/svc/v1/runs', { work_unit_id: unit.id }), 409, 'work_unit_closed');
    // ... but the replay of the one already made is still its 200.
    const replay = await api.post('/svc/v1/runs', { work_unit_id: unit.id }, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(created.body);
  });

  it('keys are scoped to the Gateway Key: another key of the Project reusing it makes a new resource', async () => {
    const other = new Api(gateway.url, await gateway.key('prj_a'));
    const key = newIdempotencyKey();
    const mine = await api.post('/svc/v1/work-units', {}, key);
    const theirs = await other.post('/svc/v1/work-units', {}, key);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('failures are not stored: the same key succeeds afterwards, even with another body', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    expectSvcError(
      await api.post('/svc/v1/runs', { work_unit_id: 'wku_00000000000000000000000000' }, key),
      404,
      'work_unit_not_found',
    );
    expectSvcError(
      await api.post('/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: -1 }, key),
      400,
      'invalid_request',
    );
    const created = await api.post('/svc/v1/runs', { work_unit_id: unit.id }, key);
    expect(created.status).toBe(201);
  });

  it('a missing Idempotency-Key: 400 invalid_idempotency_key on every governance POST', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const writes: Array<[string, unknown]> = [
      ['/svc/v1/work-units', {}],
      ['/svc/v1/runs', { work_unit_id: unit.id }],
      [`/svc/v1/work-units/${unit.id}/outcomes`, resolvedOutcome(true)],
      [`/svc/v1/runs/${run.id}/close`, {}],
      [`/svc/v1/work-units/${unit.id}/close`, {}],
    ];
    for (const [path, body] of writes) {
      expectSvcError(
        await call(gateway.url, 'POST', path, { key: api.key, body }),
        400,
        'invalid_idempotency_key',
      );
    }
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.runs).toHaveLength(1);
    expect(view.runs[0].status).toBe('active');
    expect(view.outcomes).toEqual([]);
    expect(view.work_unit.status).toBe('open');
  });

  it('illegal Idempotency-Keys: empty, 256 characters, space, non-ASCII: 400 invalid_idempotency_key', async () => {
    for (const key of ['', 'k'.repeat(256), 'with space', 'caf\u00e9']) {
      const result = await call(gateway.url, 'POST', '/svc/v1/work-units', {
        key: api.key,
        body: {},
        idempotencyKey: key,
      });
      expectSvcError(result, 400, 'invalid_idempotency_key');
    }
  });

  /** POST /svc/v1/work-units with `{}` and the given extra header name/value pairs, sent raw. */
  function postWorkUnitWithRawHeaders(extra: string[]) {
    return rawRequest(
      gateway.url,
      'POST',
      '/svc/v1/work-units',
      ['Authorization', `Bearer ${api.key}`, 'Content-Type', 'application/json', ...extra],
      '{}',
    );
  }

  it('a tab in the key: 400 invalid_idempotency_key', async () => {
    const result = await postWorkUnitWithRawHeaders(['Idempotency-Key', 'tab\there']);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('invalid_idempotency_key');
    expect(result.headers['request-id']).toBe(result.body.error.request_id);
  });

  it('a DEL byte in the key is refused with 400 (by the HTTP parser, before any route)', async () => {
    const result = await postWorkUnitWithRawHeaders(['Idempotency-Key', 'del\u007fkey']);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('invalid_request');
  });

  it('two Idempotency-Key headers: 400 invalid_idempotency_key', async () => {
    const result = await postWorkUnitWithRawHeaders(['Idempotency-Key', 'one', 'Idempotency-Key', 'two']);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('invalid_idempotency_key');
    expect(result.headers['request-id']).toBe(result.body.error.request_id);
  });

  it('legal edge keys: 1 and 255 visible ASCII characters, punctuation included', async () => {
    for (const key of ['x', 'k'.repeat(255), '!#$%&*+-.^_`|~:/"(){}[]<>=?@;,\\']) {
      const first = await call(gateway.url, 'POST', '/svc/v1/work-units', {
        key: api.key,
        body: {},
        idempotencyKey: key,
      });
      expect([key, first.status]).toEqual([key, 201]);
    }
  });
});
