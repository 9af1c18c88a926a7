/**
 * Everything that depends on the clock, with a ManualClock per gateway: Run expiry derived at read
 * time, closing expired Runs, the 30-day Outcome window after close, idempotency retention (24 h),
 * and key revocation through the two-second authentication cache. Time only moves forward, and
 * each test creates its own resources, so tests share one gateway.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, newIdempotencyKey, resolvedOutcome } from './support.js';

const SECOND = 1000;
const DAY = 86_400 * SECOND;

describeEachStore('governance: time (ManualClock)', (kind) => {
  let gateway: TestGateway;
  let clock: ManualClock;
  let api: Api;

  beforeAll(async () => {
    clock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
    gateway = await startTestGateway({ store: kind, clock });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('times come from the clock: created_at is now, expires_at is now + ttl', async () => {
    const now = clock.now();
    const unit = await api.createWorkUnit();
    expect(unit.created_at).toBe(new Date(now).toISOString());
    const run = await api.createRun(unit.id);
    expect(run.created_at).toBe(new Date(now).toISOString());
    expect(run.expires_at).toBe(new Date(now + 3600 * SECOND).toISOString());
  });

  it('a Run is active until expires_at and expired from then on, on GET Run and GET Work Unit', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { ttl_seconds: 60 });
    clock.advance(59 * SECOND);
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body.status).toBe('active');
    clock.advance(1 * SECOND);
    const expired = await api.get(`/svc/v1/runs/${run.id}`);
    expect(expired.body).toMatchObject({
      status: 'expired',
      closed_at: null,
      close_reason: null,
      expires_at: run.expires_at,
    });
    const view = await api.get(`/svc/v1/work-units/${unit.id}`);
    expect(view.body.runs[0]).toMatchObject({ id: run.id, status: 'expired' });
  });

  it('closing an expired Run: 409 run_not_active, and it stays expired', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { ttl_seconds: 10 });
    clock.advance(11 * SECOND);
    expectSvcError(await api.post(`/svc/v1/runs/${run.id}/close`, {}), 409, 'run_not_active');
    expectSvcError(await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'late' }), 409, 'run_not_active');
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body).toMatchObject({
      status: 'expired',
      close_reason: null,
    });
  });

  it('a Run closed before expiry stays closed after expires_at passes', async () => {
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id, { ttl_seconds: 10 });
    const closed = await api.post(`/svc/v1/runs/${run.id}/close`, { reason: 'early' });
    expect(closed.status).toBe(201);
    expect(closed.body.closed_at).toBe(new Date(clock.now()).toISOString());
    clock.advance(60 * SECOND);
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body).toMatchObject({
      status: 'closed',
      close_reason: 'early',
    });
    // Closing it again is still the state-level replay (200), not run_not_active.
    const again = await api.post(`/svc/v1/runs/${run.id}/close`, {});
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'closed', close_reason: 'early' });
  });

  it('Outcomes are accepted up to 30 days after the Work Unit closed, then 409 outcome_write_closed', async () => {
    const unit = await api.createWorkUnit();
    const other = await api.createWorkUnit();
    const head = await api.reportOk(unit.id, resolvedOutcome(false));
    await api.closeWorkUnit(unit.id);
    await api.closeWorkUnit(other.id);
    clock.advance(30 * DAY - SECOND);
    const revised = await api.reportOk(unit.id, resolvedOutcome(true, head.id));
    expect(revised).toMatchObject({ revision: 2, provisional: false });
    clock.advance(2 * SECOND);
    expectSvcError(
      await api.report(unit.id, resolvedOutcome(false, revised.id)),
      409,
      'outcome_write_closed',
    );
    // A first report on a Work Unit whose window has passed is refused the same way.
    expectSvcError(await api.report(other.id, resolvedOutcome(true)), 409, 'outcome_write_closed');
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toHaveLength(2);
  });

  it('an open Work Unit has no Outcome window: reports are accepted however late', async () => {
    const unit = await api.createWorkUnit();
    clock.advance(90 * DAY);
    const outcome = await api.reportOk(unit.id, resolvedOutcome(true));
    expect(outcome.provisional).toBe(true);
  });

  it('an idempotency record is retained 24 hours: replay before, a new write after', async () => {
    const key = newIdempotencyKey();
    const first = await api.post('/svc/v1/work-units', {}, key);
    clock.advance(24 * 3600 * SECOND - SECOND);
    const replay = await api.post('/svc/v1/work-units', {}, key);
    expect([first.status, replay.status]).toEqual([201, 200]);
    expect(replay.body).toEqual(first.body);
    clock.advance(2 * SECOND);
    const fresh = await api.post('/svc/v1/work-units', {}, key);
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
    // Once expired, the key may even carry a different request.
    clock.advance(25 * 3600 * SECOND);
    const unit = await api.createWorkUnit();
    const other = await api.post(`/svc/v1/work-units/${unit.id}/close`, {}, key);
    expect(other.status).toBe(201);
  });

  it('a revoked key is refused (401 authentication_failed) once the 2 s cache has passed', async () => {
    const secret = await gateway.key('prj_a');
    const revocable = new Api(gateway.url, secret);
    const unit = await revocable.createWorkUnit();
    const record = await gateway.store.findKeyByHash(hashSecret(secret));
    expect(await gateway.store.revokeKey(record!.id, new Date(clock.now()).toISOString())).toBe(true);
    clock.advance(2 * SECOND + 1);
    expectSvcError(await revocable.get(`/svc/v1/work-units/${unit.id}`), 401, 'authentication_failed');
    expectSvcError(await revocable.post('/svc/v1/work-units', {}), 401, 'authentication_failed');
    // Other keys of the Project are unaffected.
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).status).toBe(200);
  });

  it('a key revoked before its first use is refused at once', async () => {
    const secret = await gateway.key('prj_a');
    const record = await gateway.store.findKeyByHash(hashSecret(secret));
    await gateway.store.revokeKey(record!.id, new Date(clock.now()).toISOString());
    expectSvcError(
      await new Api(gateway.url, secret).post('/svc/v1/work-units', {}),
      401,
      'authentication_failed',
    );
  });
});
