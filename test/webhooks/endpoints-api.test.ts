/**
 * /svc/v1/webhook-endpoints on both stores, with the default URL rules (private networks refused):
 * the webhooks:admin scope, the secret shown once (a replay answers secret null), Project
 * isolation (another Project's ids answer 404 like unknown ones), delete, rotation, paging of
 * deliveries, and every URL rule answering 400 invalid_webhook_url naming `url`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Api, describeEachStore, expectSvcError, newIdempotencyKey } from '../governance/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { appendEvents, newEvent, waitFor } from './support.js';

/** A public address literal: it resolves to itself, no DNS or network needed (nothing is sent to it). */
const PUBLIC_URL = 'http://93.184.215.14/hooks/svc';

describeEachStore('webhook endpoints API', (kind) => {
  let gateway: TestGateway;
  let admin: Api;
  let adminB: Api;
  let reader: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({
      store: kind,
      // The dispatcher's attempts to the public address fail fast and are retried: irrelevant here.
      config: { webhooks: { poll_interval_ms: 50, timeout_ms: 200 } },
    });
    admin = new Api(gateway.url, await gateway.key('prj_a', ['webhooks:admin']));
    adminB = new Api(gateway.url, await gateway.key('prj_b', ['webhooks:admin']));
    reader = new Api(gateway.url, await gateway.key('prj_a', ['governance:read']));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('creates an endpoint whose secret is shown once; a replay answers 200 with secret null; reads never show it', async () => {
    const idempotencyKey = newIdempotencyKey();
    const body = {
      url: PUBLIC_URL,
      event_types: ['run.budget_threshold', 'key.revoked'],
      description: 'alerts',
    };
    const created = await admin.post('/svc/v1/webhook-endpoints', body, idempotencyKey);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({
      object: 'webhook_endpoint',
      project_id: 'prj_a',
      url: PUBLIC_URL,
      event_types: ['run.budget_threshold', 'key.revoked'],
      description: 'alerts',
      source: 'api',
      status: 'active',
      previous_secret_expires_at: null,
    });
    expect(created.body.id).toMatch(/^whe_[0-9A-Z]{26}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const replay = await admin.post('/svc/v1/webhook-endpoints', body, idempotencyKey);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...created.body, secret: null });
    const conflict = await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL }, idempotencyKey);
    expectSvcError(conflict, 409, 'idempotency_conflict');
    const read = await admin.get(`/svc/v1/webhook-endpoints/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(JSON.stringify(read.body)).not.toContain(created.body.secret);
    const list = await admin.get('/svc/v1/webhook-endpoints');
    expect(list.body.object).toBe('list');
    expect(list.body.data.map((endpoint: { id: string }) => endpoint.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
  });

  it('keeps the secret out of the store in plain text form only when no sealing key exists', async () => {
    const created = await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL });
    const stored = await gateway.store.webhooks.getEndpoint('prj_a', created.body.id);
    // This gateway has no sealing key: the stored form is marked plain (docs/events.md).
    expect(stored!.secret).toBe(`plain:${created.body.secret}`);
  });

  it('needs webhooks:admin and a valid body; another Project sees 404 like an unknown id', async () => {
    const created = await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL });
    expectSvcError(await reader.get('/svc/v1/webhook-endpoints'), 403, 'gateway_key_scope_denied');
    expectSvcError(
      await reader.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL }),
      403,
      'gateway_key_scope_denied',
    );
    expectSvcError(
      await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL, event_types: ['run.nope'] }),
      400,
      'invalid_request',
    );
    expectSvcError(
      await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL, colour: 'red' }),
      400,
      'invalid_request',
    );
    expectSvcError(await admin.post('/svc/v1/webhook-endpoints', {}), 400, 'invalid_request');
    const id = created.body.id;
    expectSvcError(await adminB.get(`/svc/v1/webhook-endpoints/${id}`), 404, 'webhook_endpoint_not_found');
    expectSvcError(
      await adminB.get('/svc/v1/webhook-endpoints/whe_unknown'),
      404,
      'webhook_endpoint_not_found',
    );
    expectSvcError(
      await adminB.post(`/svc/v1/webhook-endpoints/${id}/rotate-secret`, {}),
      404,
      'webhook_endpoint_not_found',
    );
    expectSvcError(
      await adminB.get(`/svc/v1/webhook-endpoints/${id}/deliveries`),
      404,
      'webhook_endpoint_not_found',
    );
    expect((await adminB.get('/svc/v1/webhook-endpoints')).body.data).toEqual([]);
    const deleteOther = await fetch(`${gateway.url}/svc/v1/webhook-endpoints/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminB.key}` },
    });
    expect(deleteOther.status).toBe(404);
  });

  it('rotates the secret (shown once) and deletes an endpoint with its deliveries', async () => {
    const created = await admin.post('/svc/v1/webhook-endpoints', { url: PUBLIC_URL });
    const id = created.body.id;
    const key = newIdempotencyKey();
    const rotated = await admin.post(`/svc/v1/webhook-endpoints/${id}/rotate-secret`, {}, key);
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(86_000_000);
    const replay = await admin.post(`/svc/v1/webhook-endpoints/${id}/rotate-secret`, {}, key);
    expect(replay.status).toBe(200);
    expect(replay.body.secret).toBeNull();
    await appendEvents(gateway.store, [newEvent('prj_a', 'run_del')]);
    await waitFor(
      async () => (await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries`)).body.data.length > 0,
      10_000,
      'a delivery row',
    );
    const deleted = await fetch(`${gateway.url}/svc/v1/webhook-endpoints/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${admin.key}` },
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id, object: 'webhook_endpoint', deleted: true });
    expectSvcError(await admin.get(`/svc/v1/webhook-endpoints/${id}`), 404, 'webhook_endpoint_not_found');
    expect(await gateway.store.webhooks.listDeliveries('prj_a', id, { limit: 10 })).toEqual([]);
  });

  it('pages deliveries newest first with limit and after, and refuses bad paging parameters', async () => {
    const created = await admin.post('/svc/v1/webhook-endpoints', {
      url: PUBLIC_URL,
      event_types: ['batch.finished'],
    });
    const id = created.body.id;
    await appendEvents(
      gateway.store,
      [1, 2, 3].map((index) => newEvent('prj_a', `run_page${index}`, 'batch.finished')),
    );
    await waitFor(
      async () => (await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries`)).body.data.length === 3,
      10_000,
      'three deliveries',
    );
    const first = await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries?limit=2`);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data[0]).toMatchObject({
      object: 'webhook_delivery',
      endpoint_id: id,
      event_type: 'batch.finished',
    });
    const second = await admin.get(
      `/svc/v1/webhook-endpoints/${id}/deliveries?limit=2&after=${first.body.next_cursor}`,
    );
    expect(second.body.data).toHaveLength(1);
    expect(second.body.has_more).toBe(false);
    const ids = [...first.body.data, ...second.body.data].map((delivery: { id: string }) => delivery.id);
    expect(new Set(ids).size).toBe(3);
    expectSvcError(
      await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries?limit=0`),
      400,
      'invalid_request',
    );
    expectSvcError(
      await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries?status=lost`),
      400,
      'invalid_request',
    );
    expectSvcError(
      await admin.get(`/svc/v1/webhook-endpoints/${id}/deliveries?after=whd_unknown`),
      400,
      'invalid_request',
    );
  });

  it.each([
    ['ftp://93.184.215.14/x', 'http or https'],
    ['http://user:pass@93.184.215.14/x', 'user name or password'],
    ['http://93.184.215.14/x#frag', 'fragment'],
    [`http://93.184.215.14/${'a'.repeat(2100)}`, 'at most'],
    ['not a url', 'absolute URL'],
    ['http://host.invalid/hook', 'does not resolve'],
    ['http://127.0.0.1:8080/hook', 'internal'],
    ['http://localhost/hook', 'internal'],
    ['http://10.1.2.3/hook', 'internal'],
    ['http://172.20.0.1/hook', 'internal'],
    ['http://192.168.1.1/hook', 'internal'],
    ['http://169.254.169.254/latest/meta-data', 'internal'],
    ['http://100.64.0.1/hook', 'internal'],
    ['http://224.0.0.1/hook', 'internal'],
    ['http://0.0.0.0/hook', 'internal'],
    ['http://2130706433/hook', 'internal'],
    ['http://[::1]/hook', 'internal'],
    ['http://[::]/hook', 'internal'],
    ['http://[fe80::1]/hook', 'internal'],
    ['http://[fd00::1]/hook', 'internal'],
    ['http://[ff02::1]/hook', 'internal'],
    ['http://[::ffff:127.0.0.1]/hook', 'internal'],
    ['http://[::ffff:a9fe:a9fe]/hook', 'internal'],
    ['http://[64:ff9b::a00:1]/hook', 'internal'],
  ])('refuses %s with 400 invalid_webhook_url naming url (%s)', async (url, reason) => {
    const result = await admin.post('/svc/v1/webhook-endpoints', { url });
    expectSvcError(result, 400, 'invalid_webhook_url');
    expect(result.body.error.message).toMatch(/^url: /);
    expect(result.body.error.message).toContain(reason);
  });
});
