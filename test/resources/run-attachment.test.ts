/**
 * X-Svc-Run-ID on the experimental endpoints: the call's ledger attempt is charged to the Run,
 * a foreign or closed Run is refused before any upstream call, and the scopes are checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeferredWorld, startDeferredWorld } from '../support/deferred-gateway.js';
import { call } from '../support/gateway.js';

describe('Run attachment on the experimental endpoints', () => {
  let world: DeferredWorld;
  let key: string;

  beforeAll(async () => {
    world = await startDeferredWorld();
    key = await world.gateway.key('prj_a');
  });
  afterAll(async () => {
    await world.close();
  });

  async function newRun(budget: number): Promise<string> {
    const unit = await call(world.gateway.url, 'POST', '/svc/v1/work-units', {
      key,
      body: {},
      idempotencyKey: `wu-${budget}-${Math.random()}`,
    });
    const run = await call(world.gateway.url, 'POST', '/svc/v1/runs', {
      key,
      body: { work_unit_id: unit.body.id, budget_micros_usd: budget },
      idempotencyKey: `run-${budget}-${Math.random()}`,
    });
    return run.body.id as string;
  }

  it('charges a synchronous /v1/responses call to the attached Run', async () => {
    const runId = await newRun(1_000_000);
    const client = world.client(key, { 'X-Svc-Run-ID': runId });
    const response = await client.responses.create({
      model: 'resp-model',
      input: 'hello',
      max_output_tokens: 32,
    });
    expect(response.status).toBe('completed');
    const run = await call(world.gateway.url, 'GET', `/svc/v1/runs/${runId}`, { key });
    expect(run.body.committed_micros_usd).toBeGreaterThan(0);
    expect(run.body.reserved_micros_usd).toBe(0);
    const audit = await world.gateway.store.listAudit({ runId, limit: 10 });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      endpoint: expect.stringContaining('/v1/responses'),
      costMicrosUsd: run.body.committed_micros_usd,
    });
  });

  it('refuses a Run whose budget cannot hold the worst case, before any upstream call', async () => {
    const runId = await newRun(1);
    world.sim.clearRequests();
    const refused = await call(world.gateway.url, 'POST', '/v1/responses', {
      key,
      headers: { 'x-svc-run-id': runId },
      body: { model: 'resp-model', input: 'hello', max_output_tokens: 32 },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('run_budget_exceeded');
    expect(world.sim.requests({ wire: 'responses' })).toHaveLength(0);
  });

  it('answers a Run of another Project exactly like an unknown one, and needs run:attach', async () => {
    const runId = await newRun(1_000_000);
    const foreignKey = await world.gateway.key('prj_b');
    const body = { model: 'resp-model', input: 'hello', max_output_tokens: 32 };
    const foreign = await call(world.gateway.url, 'POST', '/v1/responses', {
      key: foreignKey,
      headers: { 'x-svc-run-id': runId },
      body,
    });
    const unknown = await call(world.gateway.url, 'POST', '/v1/responses', {
      key: foreignKey,
      headers: { 'x-svc-run-id': 'run_unknown' },
      body,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toEqual(unknown.body.error);
    const noAttach = await world.gateway.key('prj_a', ['inference']);
    const denied = await call(world.gateway.url, 'POST', '/v1/responses', {
      key: noAttach,
      headers: { 'x-svc-run-id': runId },
      body,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('gateway_key_scope_denied');
  });
});
