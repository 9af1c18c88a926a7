/**
 * GET /svc/v1/events over real HTTP on both stores: events written by model calls that cross a
 * Project cap's thresholds and by a key revocation, read back in the contract's envelope, paged
 * with the opaque `after` cursor, filtered, scoped (governance:read or webhooks:admin) and isolated
 * per Project (another Project's event is 404), with every bad parameter a 400 naming it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { Api, describeEachStore, expectSvcError, type Json } from '../governance/support.js';
import { call } from '../support/gateway.js';
import { testProjects } from '../support/projects.js';
import { type ResourceGateway, startResourceGateway } from '../support/resource-gateway.js';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');

describeEachStore('events API', (kind) => {
  let world: ResourceGateway;
  const clock = new ManualClock(T0);
  let reader: Api;
  let otherProject: Api;
  let revokedKeyId: string;

  beforeAll(async () => {
    const [projectA, projectB] = testProjects();
    world = await startResourceGateway({
      store: kind,
      clock,
      config: { projects: [{ ...projectA, caps: { day_micros_usd: 250 } }, projectB] },
    });
    reader = new Api(world.gateway.url, await world.gateway.key('prj_a', ['governance:read', 'keys:admin']));
    otherProject = new Api(world.gateway.url, await world.gateway.key('prj_b', ['governance:read']));
    const caller = await world.gateway.key('prj_a', ['inference']);
    // Each moderation reserves and commits 100 of the 250 day cap: the second crosses 0.5 and 0.8.
    for (let index = 0; index < 2; index++) {
      const result = await call(world.gateway.url, 'POST', '/v1/moderations', {
        key: caller,
        headers: { 'svc-route': 'sim-chat' },
        body: { model: 'omni-moderation-latest', input: 'fine text' },
      });
      expect(result.status).toBe(200);
    }
    const created = await reader.post('/svc/v1/keys', { scopes: ['inference'] });
    revokedKeyId = created.body.id as string;
    expect((await reader.post(`/svc/v1/keys/${revokedKeyId}/revoke`, {})).status).toBe(201);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('lists the Project events oldest first in the envelope of the contract', async () => {
    const page = await reader.get('/svc/v1/events');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const events = page.body.data as Json[];
    expect(events.map((event) => [event.type, event.data.threshold ?? null])).toEqual([
      ['project.cap_threshold', 0.5],
      ['project.cap_threshold', 0.8],
      ['key.revoked', null],
    ]);
    expect(events[0]).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      object: 'event',
      type: 'project.cap_threshold',
      created_at: new Date(T0).toISOString(),
      project_id: 'prj_a',
      resource: { type: 'project', id: 'prj_a' },
      data: {
        project_id: 'prj_a',
        window: 'day:2026-11-23',
        threshold: 0.5,
        cap: 250,
        committed: 100,
        reserved: 100,
      },
    });
    expect(events[2]).toMatchObject({
      resource: { type: 'key', id: revokedKeyId },
      data: { key_id: revokedKeyId, revoked_at: new Date(T0).toISOString() },
    });
    const one = await reader.get(`/svc/v1/events/${events[2]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(events[2]);
  });

  it('pages with limit and the opaque after cursor, and filters by type, resource and time', async () => {
    const all = (await reader.get('/svc/v1/events')).body.data as Json[];
    const first = await reader.get('/svc/v1/events?limit=2');
    expect(first.body.data.map((event: Json) => event.id)).toEqual([all[0]!.id, all[1]!.id]);
    expect(first.body.has_more).toBe(true);
    const second = await reader.get(`/svc/v1/events?limit=2&after=${first.body.next_cursor}`);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data.map((event: Json) => event.id)).toEqual([all[2]!.id]);
    const byType = await reader.get('/svc/v1/events?type=key.revoked');
    expect(byType.body.data.map((event: Json) => event.id)).toEqual([all[2]!.id]);
    const byResource = await reader.get(`/svc/v1/events?resource_type=project&resource_id=prj_a`);
    expect(byResource.body.data).toHaveLength(2);
    const inWindow = await reader.get(
      `/svc/v1/events?from=${new Date(T0).toISOString()}&to=${new Date(T0 + 1).toISOString()}`,
    );
    expect(inWindow.body.data).toHaveLength(3);
    const before = await reader.get(`/svc/v1/events?to=${new Date(T0).toISOString()}`);
    expect(before.body.data).toHaveLength(0);
  });

  it('answers 400 naming the parameter for bad input, never a 500', async () => {
    for (const query of [
      'type=run.nothing',
      'resource_type=file',
      'limit=0',
      'limit=abc',
      'after=not-a-cursor',
      'from=yesterday',
      'colour=red',
      `from=${new Date(T0 + 10).toISOString()}&to=${new Date(T0).toISOString()}`,
    ]) {
      const result = await reader.get(`/svc/v1/events?${query}`);
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toContain(query.startsWith('from=20') ? 'to' : query.split('=')[0]);
    }
  });

  it("keeps Projects apart: another Project's event is 404 and absent from its list", async () => {
    const mine = (await reader.get('/svc/v1/events')).body.data as Json[];
    expectSvcError(await otherProject.get(`/svc/v1/events/${mine[0]!.id}`), 404, 'event_not_found');
    expectSvcError(await reader.get('/svc/v1/events/evt_UNKNOWN'), 404, 'event_not_found');
    expect((await otherProject.get('/svc/v1/events')).body.data).toEqual([]);
  });

  it('needs governance:read or webhooks:admin', async () => {
    const webhooksAdmin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['webhooks:admin']));
    expect((await webhooksAdmin.get('/svc/v1/events')).body.data).toHaveLength(3);
    const inferenceOnly = new Api(world.gateway.url, await world.gateway.key('prj_a', ['inference']));
    expectSvcError(await inferenceOnly.get('/svc/v1/events'), 403, 'gateway_key_scope_denied');
    expectSvcError(await inferenceOnly.get('/svc/v1/events/evt_x'), 403, 'gateway_key_scope_denied');
  });
});
