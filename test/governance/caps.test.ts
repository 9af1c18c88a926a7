/**
 * Spend caps over HTTP on both stores, with an injected clock: a Project day cap from configuration
 * refuses in the vendorb dialect on /v1/moderations and opens again when the UTC day rolls over; a
 * key lifetime cap set over the keys API refuses in the vendora dialect on /v1/messages before any
 * upstream call; a Run attached to a capped call keeps nothing of a refused reservation.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { call } from '../support/gateway.js';
import { testProjects } from '../support/projects.js';
import { type ResourceGateway, startResourceGateway } from '../support/resource-gateway.js';
import { messagesHeaders } from '../support/simulated-gateway.js';
import { Api, describeEachStore, type Json } from './support.js';

const T0 = Date.parse('2026-11-23T23:50:00.000Z');

describeEachStore('spend caps over HTTP', (kind) => {
  let world: ResourceGateway;
  const clock = new ManualClock(T0);
  let admin: Api;

  beforeAll(async () => {
    const [projectA, projectB] = testProjects();
    world = await startResourceGateway({
      store: kind,
      clock,
      config: {
        projects: [{ ...projectA, caps: { day_micros_usd: 250 } }, projectB],
        models: [
          {
            alias: 'capped-model',
            targets: [
              {
                connection: 'sim-vendora',
                model: 'up-capped',
                price: { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 1_000_000 },
              },
            ],
          },
        ],
      },
    });
    admin = new Api(world.gateway.url, await world.gateway.key('prj_b', ['keys:admin']));
  });
  afterAll(async () => {
    await world?.close();
  });

  function moderation(key: string): Promise<{ status: number; headers: Headers; body: Json }> {
    return call(world.gateway.url, 'POST', '/v1/moderations', {
      key,
      headers: { 'svc-route': 'sim-chat' },
      body: { model: 'omni-moderation-latest', input: 'fine text' },
    });
  }

  it('a Project day cap refuses in the vendorb dialect, naming the day, and opens at 00:00 UTC', async () => {
    const key = await world.gateway.key('prj_a', ['inference']);
    expect((await moderation(key)).status).toBe(200);
    expect((await moderation(key)).status).toBe(200);
    const upstreamCalls = world.sim.requests().length;
    const refused = await moderation(key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: {
        message: expect.stringContaining(
          'day 2026-11-23 (UTC) spend cap of Project prj_a: 250 micro-USD, 50 remaining',
        ),
        type: 'permission_error',
        param: null,
        code: 'project_budget_exceeded',
      },
    });
    expect(world.sim.requests().length).toBe(upstreamCalls);
    clock.set(Date.parse('2026-11-24T00:00:00.000Z'));
    expect((await moderation(key)).status).toBe(200);
    clock.set(T0);
  });

  it('a key lifetime cap set over the API refuses /v1/messages in the vendora dialect before any upstream call', async () => {
    const created = await admin.post('/svc/v1/keys', {
      scopes: ['inference', 'run:attach', 'run:create', 'work_unit:create', 'governance:read'],
      caps: { lifetime_micros_usd: 150 },
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect((await moderation(secret)).status).toBe(200);
    const upstreamCalls = world.sim.requests().length;
    const message = await call(world.gateway.url, 'POST', '/v1/messages', {
      headers: messagesHeaders(secret),
      body: { model: 'capped-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(message.status).toBe(403);
    expect(message.body).toMatchObject({
      type: 'error',
      error: { type: 'permission_error', code: 'key_budget_exceeded' },
    });
    expect(message.body.error.message).toContain(
      `lifetime spend cap of Gateway Key ${created.body.id}: 150 micro-USD, 50 remaining`,
    );
    expect(world.sim.requests().length).toBe(upstreamCalls);

    // Attached to a Run: the Run keeps nothing of the refused reservation.
    const user = new Api(world.gateway.url, secret);
    const unit = await user.createWorkUnit();
    const run = await user.createRun(unit.id);
    const attached = await call(world.gateway.url, 'POST', '/v1/messages', {
      headers: messagesHeaders(secret, { 'x-svc-run-id': run.id }),
      body: { model: 'capped-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(attached.body.error.code).toBe('key_budget_exceeded');
    expect((await user.get(`/svc/v1/runs/${run.id}`)).body).toMatchObject({
      reserved_micros_usd: 0,
      committed_micros_usd: 0,
    });
  });
});
