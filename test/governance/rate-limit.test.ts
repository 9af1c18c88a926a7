/**
 * Governance rate limits (DESIGN 3): a token bucket per (Project, Gateway Key) sized by the
 * Project's configuration; an empty bucket answers 429 governance_rate_limited with Retry-After in
 * whole seconds. A ManualClock makes refills exact.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, projectsWith } from './support.js';

const BURST = 3;
const RATE = 0.25; // one request every 4 s

describeEachStore('governance: rate limits', (kind) => {
  let gateway: TestGateway;
  let clock: ManualClock;

  beforeAll(async () => {
    clock = new ManualClock();
    gateway = await startTestGateway({
      store: kind,
      clock,
      config: {
        projects: projectsWith((project) => {
          if (project.id === 'prj_a') project.rate_limit = { requests_per_second: RATE, burst: BURST };
        }),
      },
    });
  });
  afterAll(async () => gateway?.close());

  it('after the burst: 429 governance_rate_limited with Retry-After in whole seconds; allowed again after it', async () => {
    const api = new Api(gateway.url, await gateway.key('prj_a'));
    for (let index = 0; index < BURST; index++)
      expect((await api.post('/svc/v1/work-units', {})).status).toBe(201);
    const limited = await api.post('/svc/v1/work-units', {});
    expectSvcError(limited, 429, 'governance_rate_limited');
    const retryAfter = limited.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(Number(retryAfter)).toBe(4);
    // Reads count too.
    expectSvcError(
      await api.get('/svc/v1/runs/run_00000000000000000000000000'),
      429,
      'governance_rate_limited',
    );
    clock.advance((Number(retryAfter) - 1) * 1000);
    expectSvcError(await api.post('/svc/v1/work-units', {}), 429, 'governance_rate_limited');
    clock.advance(1000);
    expect((await api.post('/svc/v1/work-units', {})).status).toBe(201);
  });

  it('a rate-limited write writes nothing', async () => {
    const api = new Api(gateway.url, await gateway.key('prj_a'));
    const unit = await api.createWorkUnit();
    await api.createRun(unit.id);
    await api.createRun(unit.id);
    expectSvcError(await api.post('/svc/v1/runs', { work_unit_id: unit.id }), 429, 'governance_rate_limited');
    clock.advance(4000);
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs).toHaveLength(2);
  });

  it('buckets are per Gateway Key and per Project', async () => {
    const first = new Api(gateway.url, await gateway.key('prj_a'));
    const second = new Api(gateway.url, await gateway.key('prj_a'));
    const other = new Api(gateway.url, await gateway.key('prj_b'));
    for (let index = 0; index < BURST; index++) await first.createWorkUnit();
    expectSvcError(await first.post('/svc/v1/work-units', {}), 429, 'governance_rate_limited');
    expect((await second.post('/svc/v1/work-units', {})).status).toBe(201);
    // prj_b keeps the harness default (1000/s, burst 1000).
    for (let index = 0; index < BURST + 2; index++)
      expect((await other.post('/svc/v1/work-units', {})).status).toBe(201);
  });

  it('the limit applies before scope checks, and failed requests consume tokens', async () => {
    const readOnly = new Api(gateway.url, await gateway.key('prj_a', ['governance:read']));
    for (let index = 0; index < BURST; index++) {
      expectSvcError(await readOnly.post('/svc/v1/work-units', {}), 403, 'gateway_key_scope_denied');
    }
    expectSvcError(await readOnly.post('/svc/v1/work-units', {}), 429, 'governance_rate_limited');
  });
});
