/**
 * Gateway Keys over /svc/v1/keys on both stores: keys:admin scope, the secret shown once,
 * idempotent create and revoke, Project isolation, expiry on the (injected) clock, revocation at
 * once on the replica that made it, model-alias restrictions on /v1/messages, and a configured key
 * revoked over the API staying revoked across a restart's configuration sync.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { bootstrapStore } from '../../src/startup/bootstrap.js';
import { call } from '../support/gateway.js';
import { messagesHeaders, type SimulatedGateway } from '../support/simulated-gateway.js';
import { startSimulatorWorld } from '../support/simulator-world.js';
import { Api, describeEachStore, expectSvcError, type Json, newIdempotencyKey } from './support.js';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const CONFIGURED_SECRET = `gw_${'C'.repeat(40)}`;

describeEachStore('keys API', (kind) => {
  let gateway: SimulatedGateway;
  const clock = new ManualClock(T0);
  let admin: Api;
  let adminB: Api;

  beforeAll(async () => {
    const world = await startSimulatorWorld({
      store: kind,
      clock,
      config: (simUrl) => ({
        connections: [
          {
            name: 'direct',
            profile: 'vendora.messages.2023-06-01',
            base_url: simUrl,
            auth: { scheme: 'none' },
          },
        ],
        models: ['m-allowed', 'm-other'].map((alias) => ({
          alias,
          targets: [
            {
              connection: 'direct',
              model: `up-${alias}`,
              price: { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 1_000_000 },
            },
          ],
        })),
        keys: [
          {
            id: 'key_configured',
            project: 'prj_a',
            scopes: ['inference'],
            secret_env: 'SVC_TEST_CONFIGURED_KEY',
          },
        ],
      }),
      environment: { SVC_TEST_CONFIGURED_KEY: CONFIGURED_SECRET },
    });
    gateway = { ...world.gateway, simulator: world.sim, close: world.close };
    admin = new Api(gateway.url, await gateway.key('prj_a', ['keys:admin', 'governance:read']));
    adminB = new Api(gateway.url, await gateway.key('prj_b', ['keys:admin']));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function createKey(api: Api, body: Json, idempotencyKey = newIdempotencyKey()): Promise<Json> {
    const result = await api.post('/svc/v1/keys', body, idempotencyKey);
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body;
  }

  it('creates a key whose secret is shown once; a replay answers 200 with secret null; lists never show it', async () => {
    const idempotencyKey = newIdempotencyKey();
    const body = {
      label: 'ci runner',
      scopes: ['governance:read'],
      caps: { day_micros_usd: 5000, month_micros_usd: 90_000 },
    };
    const created = await createKey(admin, body, idempotencyKey);
    expect(created).toMatchObject({
      object: 'gateway_key',
      project_id: 'prj_a',
      label: 'ci runner',
      scopes: ['governance:read'],
      models: null,
      caps: { day_micros_usd: 5000, month_micros_usd: 90_000 },
      status: 'active',
      expires_at: null,
      revoked_at: null,
    });
    expect(created.id).toMatch(/^key_/);
    expect(created.secret).toMatch(/^gw_/);
    const replay = await admin.post('/svc/v1/keys', body, idempotencyKey);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...created, secret: null });
    expectSvcError(
      await admin.post('/svc/v1/keys', { ...body, label: 'other' }, idempotencyKey),
      409,
      'idempotency_conflict',
    );

    const listed = await admin.get('/svc/v1/keys');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
    expect(JSON.stringify(listed.body)).not.toContain(hashSecret(created.secret));
    expect(listed.body.data.map((key: Json) => key.id)).toContain(created.id);
    expect((await admin.get(`/svc/v1/keys/${created.id}`)).body).toEqual({ ...created, secret: undefined });

    // The new key works with exactly its scopes.
    const own = new Api(gateway.url, created.secret);
    expectSvcError(await own.get('/svc/v1/runs/run_unknown'), 404, 'run_not_found');
    expectSvcError(await own.post('/svc/v1/work-units', {}), 403, 'gateway_key_scope_denied');
  });

  it('needs keys:admin and refuses bad bodies naming the field', async () => {
    const plain = new Api(gateway.url, await gateway.key('prj_a', ['governance:read', 'inference']));
    expectSvcError(
      await plain.post('/svc/v1/keys', { scopes: ['inference'] }),
      403,
      'gateway_key_scope_denied',
    );
    expectSvcError(await plain.get('/svc/v1/keys'), 403, 'gateway_key_scope_denied');
    expectSvcError(await plain.post('/svc/v1/keys/key_x/revoke', {}), 403, 'gateway_key_scope_denied');
    const cases: Array<[Json, string]> = [
      [{}, 'scopes'],
      [{ scopes: ['root'] }, 'scopes.0'],
      [{ scopes: ['inference'], models: ['nope'] }, 'models.0'],
      [{ scopes: ['inference'], expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ scopes: ['inference'], expires_at: 'tomorrow' }, 'expires_at'],
      [{ scopes: ['inference'], caps: { day_micros_usd: -1 } }, 'caps.day_micros_usd'],
      [{ scopes: ['inference'], caps: { weekly: 1 } }, 'caps.weekly'],
      [{ scopes: ['inference'], secret: 'gw_x' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const result = await admin.post('/svc/v1/keys', body);
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toContain(field);
    }
    expectSvcError(
      await call(gateway.url, 'POST', '/svc/v1/keys', { key: admin.key, body: { scopes: ['inference'] } }),
      400,
      'invalid_idempotency_key',
    );
  });

  it("isolates Projects: another Project's key is unknown to list, read and revoke", async () => {
    const ofB = await createKey(adminB, { scopes: ['inference'] });
    expectSvcError(await admin.get(`/svc/v1/keys/${ofB.id}`), 404, 'key_not_found');
    expectSvcError(await admin.post(`/svc/v1/keys/${ofB.id}/revoke`, {}), 404, 'key_not_found');
    expect((await admin.get('/svc/v1/keys')).body.data.map((key: Json) => key.id)).not.toContain(ofB.id);
    expect(
      (await adminB.get('/svc/v1/keys')).body.data.every((key: Json) => key.project_id === 'prj_b'),
    ).toBe(true);
    expect((await adminB.get(`/svc/v1/keys/${ofB.id}`)).body.status).toBe('active');
  });

  it('expires a key at its expires_at on the clock (ttl_seconds and expires_at)', async () => {
    const byTtl = await createKey(admin, { scopes: ['governance:read'], ttl_seconds: 60 });
    expect(byTtl.expires_at).toBe(new Date(clock.now() + 60_000).toISOString());
    const byTime = await createKey(admin, {
      scopes: ['governance:read'],
      expires_at: new Date(clock.now() + 120_000).toISOString(),
    });
    const first = new Api(gateway.url, byTtl.secret);
    expectSvcError(await first.get('/svc/v1/runs/run_x'), 404, 'run_not_found');
    clock.advance(60_000);
    const expired = await first.get('/svc/v1/runs/run_x');
    expectSvcError(expired, 401, 'authentication_failed');
    expect(expired.body.error.message).toContain('expired');
    expectSvcError(await new Api(gateway.url, byTime.secret).get('/svc/v1/runs/run_x'), 404, 'run_not_found');
    expect((await admin.get(`/svc/v1/keys/${byTtl.id}`)).body.status).toBe('expired');
    clock.advance(60_000);
    expectSvcError(
      await new Api(gateway.url, byTime.secret).get('/svc/v1/runs/run_x'),
      401,
      'authentication_failed',
    );
  });

  it('revokes at once on this replica (201, then 200 unchanged), including the caller itself', async () => {
    const victim = await createKey(admin, { scopes: ['governance:read'] });
    const user = new Api(gateway.url, victim.secret);
    expectSvcError(await user.get('/svc/v1/runs/run_x'), 404, 'run_not_found');
    const revoked = await admin.post(`/svc/v1/keys/${victim.id}/revoke`, {});
    expect(revoked.status).toBe(201);
    expect(revoked.body).toMatchObject({ id: victim.id, status: 'revoked' });
    expectSvcError(await user.get('/svc/v1/runs/run_x'), 401, 'authentication_failed');
    const again = await admin.post(`/svc/v1/keys/${victim.id}/revoke`, {});
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

    const selfAdmin = await createKey(admin, { scopes: ['keys:admin'] });
    const self = new Api(gateway.url, selfAdmin.secret);
    expect((await self.post(`/svc/v1/keys/${selfAdmin.id}/revoke`, {})).status).toBe(201);
    expectSvcError(await self.get('/svc/v1/keys'), 401, 'authentication_failed');
  });

  it('restricts a key to its model aliases on /v1/messages (vendora dialect) and count_tokens', async () => {
    const limited = await createKey(admin, { scopes: ['inference'], models: ['m-allowed'] });
    const body = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    const refused = await call(gateway.url, 'POST', '/v1/messages', {
      headers: messagesHeaders(limited.secret),
      body: body('m-other'),
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      type: 'error',
      error: { type: 'permission_error', code: 'model_not_allowed' },
    });
    expect(refused.body.error.message).toContain('m-other');
    const counted = await call(gateway.url, 'POST', '/v1/messages/count_tokens', {
      headers: messagesHeaders(limited.secret),
      body: { model: 'm-other', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(counted.body.error.code).toBe('model_not_allowed');
    const allowed = await call(gateway.url, 'POST', '/v1/messages', {
      headers: messagesHeaders(limited.secret),
      body: body('m-allowed'),
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
  });

  it('a configured key revoked over the API stays revoked after the configuration is synced again', async () => {
    const configured = new Api(gateway.url, CONFIGURED_SECRET);
    expect((await admin.get('/svc/v1/keys/key_configured')).body.status).toBe('active');
    expect((await admin.post('/svc/v1/keys/key_configured/revoke', {})).status).toBe(201);
    await bootstrapStore(gateway.store, gateway.config, { SVC_TEST_CONFIGURED_KEY: CONFIGURED_SECRET });
    expect((await admin.get('/svc/v1/keys/key_configured')).body.status).toBe('revoked');
    clock.advance(5_000);
    const refused = await call(gateway.url, 'POST', '/v1/messages', {
      headers: messagesHeaders(configured.key),
      body: { model: 'm-allowed', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(refused.status).toBe(401);
  });
});
