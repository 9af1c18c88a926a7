/**
 * Who may do what (SPEC 5): authentication failures (401 authentication_failed), each endpoint's
 * scope (403 gateway_key_scope_denied), and Project isolation: another Project's resource answers
 * exactly like an unknown id (same status, code and message).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCOPES } from '../../src/config/schema.js';
import { type CallResult, call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, newIdempotencyKey, resolvedOutcome } from './support.js';

const UNKNOWN_WKU = 'wku_00000000000000000000000000';
const UNKNOWN_RUN = 'run_00000000000000000000000000';

describeEachStore('governance: authentication, scopes, Project isolation', (kind) => {
  let gateway: TestGateway;
  let api: Api;
  let apiB: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
    apiB = new Api(gateway.url, await gateway.key('prj_b'));
  });
  afterAll(async () => gateway?.close());

  async function endpoints() {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    return [
      { scope: 'work_unit:create', method: 'POST', path: '/svc/v1/work-units', body: {} },
      { scope: 'governance:read', method: 'GET', path: `/svc/v1/work-units/${unit.id}` },
      { scope: 'run:create', method: 'POST', path: '/svc/v1/runs', body: { work_unit_id: unit.id } },
      { scope: 'governance:read', method: 'GET', path: `/svc/v1/runs/${run.id}` },
      { scope: 'run:create', method: 'POST', path: `/svc/v1/runs/${run.id}/close`, body: {} },
      {
        scope: 'outcome:write',
        method: 'POST',
        path: `/svc/v1/work-units/${unit.id}/outcomes`,
        body: resolvedOutcome(true),
      },
      // Last, so the Work Unit is still open for the writes above.
      { scope: 'work_unit:create', method: 'POST', path: `/svc/v1/work-units/${unit.id}/close`, body: {} },
    ] as const;
  }

  function send(
    endpoint: { method: string; path: string; body?: unknown },
    options: Parameters<typeof call>[3],
  ): Promise<CallResult> {
    return call(gateway.url, endpoint.method, endpoint.path, {
      ...options,
      ...(endpoint.method === 'POST' ? { body: endpoint.body, idempotencyKey: newIdempotencyKey() } : {}),
    });
  }

  it('each endpoint refuses a key lacking its scope: 403 gateway_key_scope_denied, nothing written', async () => {
    for (const endpoint of await endpoints()) {
      const lacking = await gateway.key(
        'prj_a',
        SCOPES.filter((scope) => scope !== endpoint.scope),
      );
      const result = await send(endpoint, { key: lacking });
      expectSvcError(result, 403, 'gateway_key_scope_denied');
      expect(result.body.error.message).toContain(endpoint.scope);
    }
    // The Work Unit and Run used above are untouched.
    const [, read] = await endpoints();
    expect((await api.get(read.path)).body).toMatchObject({ work_unit: { status: 'open' }, outcomes: [] });
  });

  it('each endpoint accepts a key holding only its scope', async () => {
    for (const endpoint of await endpoints()) {
      const only = await gateway.key('prj_a', [endpoint.scope]);
      const result = await send(endpoint, { key: only });
      expect([endpoint.path, result.status]).toEqual([endpoint.path, endpoint.method === 'GET' ? 200 : 201]);
    }
  });

  it('inference and run:attach grant no governance endpoint', async () => {
    const key = await gateway.key('prj_a', ['inference', 'run:attach']);
    for (const endpoint of await endpoints()) {
      expectSvcError(await send(endpoint, { key }), 403, 'gateway_key_scope_denied');
    }
  });

  it('missing key: 401 authentication_failed on every endpoint', async () => {
    for (const endpoint of await endpoints()) {
      expectSvcError(await send(endpoint, {}), 401, 'authentication_failed');
    }
  });

  it('unknown and malformed keys: 401 authentication_failed', async () => {
    const unit = await api.createWorkUnit();
    const path = `/svc/v1/work-units/${unit.id}`;
    const unknown = `gw_${'A1b2'.repeat(10)}`;
    for (const authorization of [
      `Bearer ${unknown}`,
      `Basic ${Buffer.from(`user:${api.key}`).toString('base64')}`,
      'Bearer',
      'Bearer ',
      api.key,
      `Bearer ${api.key} extra`,
      `Token ${api.key}`,
      'Bearer gw_short',
      `Bearer ${api.key.slice(3)}`,
    ]) {
      const result = await call(gateway.url, 'GET', path, { headers: { authorization } });
      expectSvcError(result, 401, 'authentication_failed');
    }
    expectSvcError(
      await call(gateway.url, 'GET', path, { headers: { 'x-api-key': unknown } }),
      401,
      'authentication_failed',
    );
  });

  it('x-api-key and Authorization both present and different: 401 authentication_failed', async () => {
    const other = await gateway.key('prj_a');
    const unit = await api.createWorkUnit();
    const path = `/svc/v1/work-units/${unit.id}`;
    const differ = await call(gateway.url, 'GET', path, { key: api.key, headers: { 'x-api-key': other } });
    expectSvcError(differ, 401, 'authentication_failed');
    const post = await call(gateway.url, 'POST', '/svc/v1/work-units', {
      key: api.key,
      headers: { 'x-api-key': other },
      body: {},
      idempotencyKey: newIdempotencyKey(),
    });
    expectSvcError(post, 401, 'authentication_failed');
    // The same key in both headers is accepted.
    const same = await call(gateway.url, 'GET', path, { key: api.key, headers: { 'x-api-key': api.key } });
    expect(same.status).toBe(200);
  });

  it('authentication is checked before scope and body: a bad key with a bad body is still 401', async () => {
    const result = await call(gateway.url, 'POST', '/svc/v1/runs', {
      headers: { authorization: 'Bearer gw_nope' },
      body: { nonsense: true },
    });
    expectSvcError(result, 401, 'authentication_failed');
  });

  it("a prj_b key reading prj_a's Work Unit and Run answers exactly like an unknown id", async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const foreignUnit = await apiB.get(`/svc/v1/work-units/${unit.id}`);
    const unknownUnit = await apiB.get(`/svc/v1/work-units/${UNKNOWN_WKU}`);
    expectSvcError(foreignUnit, 404, 'work_unit_not_found');
    expect(foreignUnit.body.error.message).toBe(unknownUnit.body.error.message);
    const foreignRun = await apiB.get(`/svc/v1/runs/${run.id}`);
    const unknownRun = await apiB.get(`/svc/v1/runs/${UNKNOWN_RUN}`);
    expectSvcError(foreignRun, 404, 'run_not_found');
    expect(foreignRun.body.error.message).toBe(unknownRun.body.error.message);
  });

  it("a prj_b key closing prj_a's Work Unit or Run answers like an unknown id and changes nothing", async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const foreignUnit = await apiB.post(`/svc/v1/work-units/${unit.id}/close`, {});
    const unknownUnit = await apiB.post(`/svc/v1/work-units/${UNKNOWN_WKU}/close`, {});
    expectSvcError(foreignUnit, 404, 'work_unit_not_found');
    expect(foreignUnit.body.error.message).toBe(unknownUnit.body.error.message);
    const foreignRun = await apiB.post(`/svc/v1/runs/${run.id}/close`, { reason: 'hijack' });
    const unknownRun = await apiB.post(`/svc/v1/runs/${UNKNOWN_RUN}/close`, { reason: 'hijack' });
    expectSvcError(foreignRun, 404, 'run_not_found');
    expect(foreignRun.body.error.message).toBe(unknownRun.body.error.message);
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.work_unit.status).toBe('open');
    expect(view.runs[0]).toMatchObject({ status: 'active', close_reason: null });
  });

  it("a prj_b key attaching a Run or an Outcome to prj_a's Work Unit answers like an unknown id", async () => {
    const unit = await api.createWorkUnit();
    const foreignRun = await apiB.post('/svc/v1/runs', { work_unit_id: unit.id });
    const unknownRun = await apiB.post('/svc/v1/runs', { work_unit_id: UNKNOWN_WKU });
    expectSvcError(foreignRun, 404, 'work_unit_not_found');
    expect(foreignRun.body.error.message).toBe(unknownRun.body.error.message);
    const foreignOutcome = await apiB.report(unit.id, resolvedOutcome(true));
    const unknownOutcome = await apiB.report(UNKNOWN_WKU, resolvedOutcome(true));
    expectSvcError(foreignOutcome, 404, 'work_unit_not_found');
    expect(foreignOutcome.body.error.message).toBe(unknownOutcome.body.error.message);
    // Closed or not makes no difference to what prj_b sees.
    await api.closeWorkUnit(unit.id);
    const closedForeign = await apiB.post('/svc/v1/runs', { work_unit_id: unit.id });
    expectSvcError(closedForeign, 404, 'work_unit_not_found');
    expect(closedForeign.body.error.message).toBe(unknownRun.body.error.message);
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.runs).toEqual([]);
    expect(view.outcomes).toEqual([]);
  });

  it("idempotency keys do not cross Projects: prj_b reusing prj_a's key gets its own result", async () => {
    const key = newIdempotencyKey();
    const a = await api.post('/svc/v1/work-units', {}, key);
    const b = await apiB.post('/svc/v1/work-units', {}, key);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.project_id).toBe('prj_b');
    expectSvcError(await apiB.get(`/svc/v1/work-units/${a.body.id}`), 404, 'work_unit_not_found');
  });
});
