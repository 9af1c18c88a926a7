/**
 * Runs over HTTP: create (Project defaults, ceilings, integer rules, 32 per Work Unit, closed Work
 * Unit), GET, close (reason default and length, state-level idempotency). Expiry is in time.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, type Json, newIdempotencyKey } from './support.js';

const DEFAULT_BUDGET = 1_000_000;
const MAX_BUDGET = 50_000_000;
const DEFAULT_TTL = 3600;
const MAX_TTL = 86_400;

function ttlOf(run: Json): number {
  return (Date.parse(run.expires_at) - Date.parse(run.created_at)) / 1000;
}

describeEachStore('governance: Runs', (kind) => {
  let gateway: TestGateway;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('creates a Run: 201 with id, work_unit_id, budget_micros_usd, status active, expires_at', async () => {
    const unit = await api.createWorkUnit();
    const result = await api.post('/svc/v1/runs', {
      work_unit_id: unit.id,
      budget_micros_usd: 2500,
      ttl_seconds: 120,
    });
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({
      work_unit_id: unit.id,
      budget_micros_usd: 2500,
      committed_micros_usd: 0,
      reserved_micros_usd: 0,
      remaining_micros_usd: 2500,
      unknown_attempts: 0,
      budget_state: 'available',
      status: 'active',
      closed_at: null,
      close_reason: null,
    });
    expect(result.body.id).toMatch(/^run_[0-9A-Z]{26}$/);
    expect(ttlOf(result.body)).toBe(120);
  });

  it('omitted budget and ttl take the Project defaults', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    expect(run.budget_micros_usd).toBe(DEFAULT_BUDGET);
    expect(ttlOf(run)).toBe(DEFAULT_TTL);
  });

  it('zero budget and zero ttl take the Project defaults', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { budget_micros_usd: 0, ttl_seconds: 0 });
    expect(run.budget_micros_usd).toBe(DEFAULT_BUDGET);
    expect(ttlOf(run)).toBe(DEFAULT_TTL);
  });

  it('values at the Project ceiling are accepted', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { budget_micros_usd: MAX_BUDGET, ttl_seconds: MAX_TTL });
    expect(run.budget_micros_usd).toBe(MAX_BUDGET);
    expect(ttlOf(run)).toBe(MAX_TTL);
  });

  it('an explicit value above the Project ceiling: 400 invalid_request naming the field', async () => {
    const unit = await api.createWorkUnit();
    const budget = await api.post('/svc/v1/runs', {
      work_unit_id: unit.id,
      budget_micros_usd: MAX_BUDGET + 1,
    });
    expectSvcError(budget, 400, 'invalid_request');
    expect(budget.body.error.message).toContain('budget_micros_usd');
    const ttl = await api.post('/svc/v1/runs', { work_unit_id: unit.id, ttl_seconds: MAX_TTL + 1 });
    expectSvcError(ttl, 400, 'invalid_request');
    expect(ttl.body.error.message).toContain('ttl_seconds');
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toEqual([]);
  });

  it('negative, fractional, string, boolean or null budget/ttl: 400 invalid_request', async () => {
    const unit = await api.createWorkUnit();
    for (const field of ['budget_micros_usd', 'ttl_seconds']) {
      for (const value of [-1, 1.5, '100', true, null, 1e300]) {
        const result = await api.post('/svc/v1/runs', { work_unit_id: unit.id, [field]: value });
        expectSvcError(result, 400, 'invalid_request');
        expect(result.body.error.message).toContain(field);
      }
    }
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toEqual([]);
  });

  it('missing work_unit_id and unknown fields: 400 invalid_request', async () => {
    const missing = await api.post('/svc/v1/runs', { budget_micros_usd: 10 });
    expectSvcError(missing, 400, 'invalid_request');
    expect(missing.body.error.message).toContain('work_unit_id');
    const unit = await api.createWorkUnit();
    const unknown = await api.post('/svc/v1/runs', { work_unit_id: unit.id, budget: 10 });
    expectSvcError(unknown, 400, 'invalid_request');
    expect(unknown.body.error.message).toContain('budget');
  });

  it('a Run on an unknown Work Unit: 404 work_unit_not_found', async () => {
    expectSvcError(
      await api.post('/svc/v1/runs', { work_unit_id: 'wku_00000000000000000000000000' }),
      404,
      'work_unit_not_found',
    );
  });

  it('the 33rd Run of a Work Unit: 429 governance_resource_limit without Retry-After', async () => {
    const unit = await api.createWorkUnit();
    for (let index = 0; index < 32; index++) await api.createRun(unit.id, { budget_micros_usd: 1 });
    const refused = await api.post('/svc/v1/runs', { work_unit_id: unit.id });
    expectSvcError(refused, 429, 'governance_resource_limit');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toHaveLength(32);
    // The limit is per Work Unit: another one still takes Runs.
    const other = await api.createWorkUnit();
    await api.createRun(other.id);
  });

  it('GET a Run: id, work_unit_id, budget and ledger fields, status', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { budget_micros_usd: 777 });
    const result = await api.get(`/svc/v1/runs/${run.id}`);
    expect(result.status).toBe(200);
    expect(result.body).toEqual(run);
    for (const field of [
      'id',
      'work_unit_id',
      'budget_micros_usd',
      'committed_micros_usd',
      'reserved_micros_usd',
      'unknown_attempts',
      'status',
    ]) {
      expect(result.body).toHaveProperty(field);
    }
  });

  it('GET an unknown Run: 404 run_not_found', async () => {
    expectSvcError(await api.get('/svc/v1/runs/run_00000000000000000000000000'), 404, 'run_not_found');
  });

  it("close without reason: 201, status closed, close_reason 'completed'", async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const closed = await api.post(`/svc/v1/runs/${run.id}/close`, {});
    expect(closed.status).toBe(201);
    expect(closed.body).toMatchObject({ id: run.id, status: 'closed', close_reason: 'completed' });
    expect(Date.parse(closed.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(run.created_at));
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body).toMatchObject({
      status: 'closed',
      close_reason: 'completed',
    });
  });

  it('close with a reason of 1 and of 64 characters keeps it', async () => {
    const unit = await api.createWorkUnit();
    for (const reason of ['x', 'r'.repeat(64)]) {
      const run = await api.createRun(unit.id);
      const closed = await api.post(`/svc/v1/runs/${run.id}/close`, { reason });
      expect(closed.status).toBe(201);
      expect(closed.body.close_reason).toBe(reason);
    }
  });

  it('close with an empty, 65-character or non-string reason: 400 invalid_request, Run stays active', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    for (const reason of ['', 'r'.repeat(65), 5, null]) {
      const result = await api.post(`/svc/v1/runs/${run.id}/close`, { reason });
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toContain('reason');
    }
    const unknown = await api.post(`/svc/v1/runs/${run.id}/close`, { why: 'x' });
    expectSvcError(unknown, 400, 'invalid_request');
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body.status).toBe('active');
  });

  it('close replay with the same key: 200 and the same body', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const key = newIdempotencyKey();
    const first = await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'done' }, key);
    const replay = await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'done' }, key);
    expect(first.status).toBe(201);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
  });

  it('closing a closed Run with a new key: 200, the first close_reason and closed_at kept', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id);
    const first = await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'first' });
    const again = await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'second' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'closed',
      close_reason: 'first',
      closed_at: first.body.closed_at,
    });
  });

  it('close of an unknown Run: 404 run_not_found', async () => {
    expectSvcError(
      await api.post('/svc/v1/runs/run_00000000000000000000000000/close', {}),
      404,
      'run_not_found',
    );
  });
});
