/**
 * Request-level rules of every governance POST (SPEC 4, 8; DESIGN 3): 16 KiB bodies, Content-Type
 * application/json, JSON objects only, and the svc error dialect with its request-id header.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, newIdempotencyKey, resolvedOutcome } from './support.js';

const LIMIT = 16 * 1024;

/** `{}` padded with spaces to exactly `bytes` bytes. */
function paddedEmptyObject(bytes: number): string {
  return `{${' '.repeat(bytes - 2)}}`;
}

describeEachStore('governance: HTTP request rules and error dialect', (kind) => {
  let gateway: TestGateway;
  let api: Api;
  let writes: Array<{ path: string; body: unknown; code: string }>;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    writes = [
      { path: '/svc/v1/work-units', body: {}, code: 'invalid_request' },
      { path: '/svc/v1/runs', body: { work_unit_id: unit.id }, code: 'invalid_request' },
      {
        path: `/svc/v1/work-units/${unit.id}/outcomes`,
        body: resolvedOutcome(true),
        code: 'invalid_outcome',
      },
      { path: `/svc/v1/runs/${run.id}/close`, body: {}, code: 'invalid_request' },
      { path: `/svc/v1/work-units/${unit.id}/close`, body: {}, code: 'invalid_request' },
    ];
  });
  afterAll(async () => gateway?.close());

  function raw(path: string, rawBody: string | undefined, contentType?: string) {
    return call(gateway.url, 'POST', path, {
      key: api.key,
      idempotencyKey: newIdempotencyKey(),
      ...(rawBody === undefined ? {} : { rawBody }),
      headers: contentType === undefined ? {} : { 'content-type': contentType },
    });
  }

  it('a body of exactly 16 KiB is accepted; one byte more is 400 invalid_request', async () => {
    const exact = await raw('/svc/v1/work-units', paddedEmptyObject(LIMIT), 'application/json');
    expect(exact.status).toBe(201);
    const over = await raw('/svc/v1/work-units', paddedEmptyObject(LIMIT + 1), 'application/json');
    expectSvcError(over, 400, 'invalid_request');
    expect(over.body.error.message).toContain('16 KiB');
  });

  it('every governance POST refuses a body over 16 KiB with 400 invalid_request', async () => {
    for (const write of writes) {
      const body = JSON.stringify(write.body);
      const padded = `${body.slice(0, -1)}${' '.repeat(LIMIT)}}`;
      expectSvcError(await raw(write.path, padded, 'application/json'), 400, 'invalid_request');
    }
  });

  it('a large value inside an otherwise valid body is still bounded by 16 KiB', async () => {
    const unit = await api.createWorkUnit();
    const result = await api.post('/svc/v1/runs', { work_unit_id: unit.id, padding: 'x'.repeat(LIMIT) });
    expectSvcError(result, 400, 'invalid_request');
  });

  it('wrong or missing Content-Type: 400 invalid_request on every governance POST', async () => {
    for (const write of writes) {
      const body = JSON.stringify(write.body);
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/jsonx',
        'multipart/form-data; boundary=x',
      ]) {
        const result = await raw(write.path, body, contentType);
        expectSvcError(result, 400, 'invalid_request');
        expect(result.body.error.message).toContain('Content-Type');
      }
      // No Content-Type header at all (a Blob without a type makes fetch send none).
      const none = await fetch(`${gateway.url}${write.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api.key}`, 'idempotency-key': newIdempotencyKey() },
        body: new Blob([body]),
      });
      const parsed = (await none.json()) as { error: { code: string; request_id: string } };
      expect(none.status).toBe(400);
      expect(parsed.error.code).toBe('invalid_request');
      expect(none.headers.get('request-id')).toBe(parsed.error.request_id);
    }
  });

  it('Content-Type parameters and case are accepted', async () => {
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
      expect((await raw('/svc/v1/work-units', '{}', contentType)).status).toBe(201);
    }
  });

  it('invalid JSON, an empty body, or a non-object: 400 (invalid_outcome on the outcome endpoint for non-objects)', async () => {
    for (const write of writes) {
      for (const text of ['{"a":', 'not json', '']) {
        const result = await raw(write.path, text, 'application/json');
        expectSvcError(result, 400, 'invalid_request');
      }
      for (const text of ['[]', '"text"', '42', 'null', 'true']) {
        const result = await raw(write.path, text, 'application/json');
        expectSvcError(result, 400, write.code);
      }
    }
  });

  it('unknown fields: 400 invalid_request, invalid_outcome on the outcome endpoint, message naming the field', async () => {
    for (const write of writes) {
      const result = await api.post(write.path, { ...(write.body as object), surprise_field: 1 });
      expectSvcError(result, 400, write.code);
      expect(result.body.error.message).toContain('surprise_field');
    }
  });

  it('every response carries a request-id header, unique per request', async () => {
    const ids = new Set<string>();
    for (let index = 0; index < 5; index++) {
      const result = await api.post('/svc/v1/work-units', {});
      expect(result.status).toBe(201);
      ids.add(result.headers.get('request-id')!);
    }
    expect(ids.size).toBe(5);
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Z]+$/);
  });

  it('an unknown /svc/v1 route answers 404 in the svc dialect', async () => {
    expectSvcError(await api.get('/svc/v1/nothing-here'), 404, 'route_not_found');
    expectSvcError(
      await call(gateway.url, 'DELETE', '/svc/v1/work-units/wku_x', { key: api.key }),
      404,
      'route_not_found',
    );
  });

  it('error bodies never carry a stack, and 4xx bodies are the three fields only', async () => {
    const result = await api.post('/svc/v1/runs', { work_unit_id: 7 });
    expectSvcError(result, 400, 'invalid_request');
    expect(JSON.stringify(result.body)).not.toMatch(/at .*\.ts:\d+/);
  });
});
