/**
 * The service around the governance API: /healthz, /readyz, GET /svc/v1/openapi.json (a valid
 * OpenAPI document whose schemas describe what the endpoints really answer), and 503
 * governance_unavailable when the store cannot be reached (never empty data, never fail open).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, type Json, resolvedOutcome } from './support.js';

describeEachStore('governance: health, readiness, OpenAPI', (kind) => {
  let gateway: TestGateway;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('/healthz answers 200 without a key', async () => {
    const result = await call(gateway.url, 'GET', '/healthz');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: 'ok' });
    expect(result.headers.get('request-id')).toMatch(/^req_/);
  });

  it('/readyz answers 200 with the store kind when the store answers', async () => {
    const result = await call(gateway.url, 'GET', '/readyz');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: 'ready', store: kind });
  });

  it('GET /svc/v1/openapi.json is a valid OpenAPI document, version 0.8.4, covering every endpoint', async () => {
    const result = await call(gateway.url, 'GET', '/svc/v1/openapi.json');
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    const validator = new Validator();
    const validation = await validator.validate(result.body);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    expect(result.body.info.version).toBe('0.8.4');
    const operations = Object.entries(result.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /svc/v1/work-units',
        'GET /svc/v1/work-units/{id}',
        'POST /svc/v1/work-units/{id}/close',
        'POST /svc/v1/work-units/{id}/outcomes',
        'POST /svc/v1/runs',
        'GET /svc/v1/runs/{id}',
        'POST /svc/v1/runs/{id}/close',
        'GET /svc/v1/work-units',
        'GET /svc/v1/runs',
        'GET /svc/v1/outcomes',
        'GET /svc/v1/outcome-definitions',
        'GET /svc/v1/runs/{id}/attempts',
        'GET /svc/v1/attempts',
        'GET /svc/v1/attempts/{id}',
        'GET /svc/v1/reports/spend',
        'GET /svc/v1/reports/cost-per-outcome',
        'POST /svc/v1/keys',
        'GET /svc/v1/keys',
        'GET /svc/v1/keys/{id}',
        'POST /svc/v1/keys/{id}/revoke',
        'GET /svc/v1/events',
        'GET /svc/v1/events/{id}',
        'POST /svc/v1/webhook-endpoints',
        'GET /svc/v1/webhook-endpoints',
        'GET /svc/v1/webhook-endpoints/{id}',
        'DELETE /svc/v1/webhook-endpoints/{id}',
        'POST /svc/v1/webhook-endpoints/{id}/rotate-secret',
        'GET /svc/v1/webhook-endpoints/{id}/deliveries',
        'GET /svc/v1/webhook-endpoints/{id}/deliveries/{delivery_id}',
        'POST /svc/v1/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver',
        'GET /svc/v1/attempts/{id}/capture',
      ].sort(),
    );
    // Every write documents the required Idempotency-Key header.
    for (const [path, item] of Object.entries(result.body.paths as Record<string, Json>)) {
      if (!item.post) continue;
      const header = item.post.parameters.find(
        (parameter: { name: string }) => parameter.name === 'Idempotency-Key',
      );
      expect([path, header?.required]).toEqual([path, true]);
    }
  });

  it('the documented schemas match real responses (Work Unit, Run, Outcome, view, error)', async () => {
    const document = (await call(gateway.url, 'GET', '/svc/v1/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
    const check = (name: string, value: unknown) => {
      const validate = ajv.getSchema(`openapi#/components/schemas/${name}`)!;
      expect(validate(value), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    const unit = await api.createWorkUnit();
    check('WorkUnit', unit);
    const run = await api.createRun(unit.id);
    check('Run', run);
    check('Run', (await api.get(`/svc/v1/runs/${run.id}`)).body);
    check('Outcome', await api.reportOk(unit.id, resolvedOutcome(true)));
    check('WorkUnitView', (await api.get(`/svc/v1/work-units/${unit.id}`)).body);
    check('Run', (await api.post(`/svc/v1/runs/${run.id}/close`, {})).body);
    check('WorkUnit', await api.closeWorkUnit(unit.id));
    check('Error', (await api.get('/svc/v1/runs/run_x')).body);
    // The request schemas refuse what the endpoints refuse.
    const body = ajv.getSchema('openapi#/components/schemas/CreateRunBody')!;
    expect(body({ work_unit_id: unit.id, budget_micros_usd: 1.5 })).toBe(false);
    expect(body({ work_unit_id: unit.id, extra: 1 })).toBe(false);
    expect(body({ work_unit_id: unit.id, budget_micros_usd: 10, ttl_seconds: 60 })).toBe(true);
  });
});

describeEachStore('governance: store unavailable', (kind) => {
  let gateway: TestGateway;
  let api: Api;
  let unitId: string;
  let runId: string;
  let unseenKey: string;

  beforeAll(async () => {
    // A clock that never moves keeps `api`'s key in the authentication cache for the whole block.
    gateway = await startTestGateway({ store: kind, clock: new ManualClock() });
    api = new Api(gateway.url, await gateway.key('prj_a'));
    unseenKey = await gateway.key('prj_a');
    const unit = await api.createWorkUnit();
    unitId = unit.id;
    runId = (await api.createRun(unit.id)).id;
    // The store goes away under a running gateway.
    await gateway.store.close();
  });
  afterAll(async () => {
    // The store is already closed; closing it again must not keep the rest of the clean-up from running.
    await gateway?.close();
  });

  it('/readyz answers 503 while /healthz still answers 200', async () => {
    const ready = await call(gateway.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', store: kind });
    expect((await call(gateway.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('reads and writes with a cached key: 503 governance_unavailable with Retry-After', async () => {
    for (const result of [
      await api.get(`/svc/v1/work-units/${unitId}`),
      await api.get(`/svc/v1/runs/${runId}`),
      await api.post('/svc/v1/work-units', {}),
      await api.post('/svc/v1/runs', { work_unit_id: unitId }),
      await api.post(`/svc/v1/runs/${runId}/close`, {}),
      await api.report(unitId, resolvedOutcome(true)),
    ]) {
      expectSvcError(result, 503, 'governance_unavailable');
      expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });

  it('a key that must be looked up: 503 governance_unavailable, never 401 and never success', async () => {
    const result = await new Api(gateway.url, unseenKey).get(`/svc/v1/work-units/${unitId}`);
    expectSvcError(result, 503, 'governance_unavailable');
  });
});
