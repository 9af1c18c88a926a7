/**
 * Work Units over HTTP: create (fields, frozen definitions, outcome_definition_ids rules), GET
 * {work_unit, runs, outcomes}, close (SPEC 3 Work Unit table) and its idempotent replay.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  Api,
  describeEachStore,
  expectSvcError,
  newIdempotencyKey,
  projectsWith,
  resolvedOutcome,
} from './support.js';

const EXTRA = ['odef_x1', 'odef_x2', 'odef_x3', 'odef_x4', 'odef_x5', 'odef_x6', 'odef_x7'];

describeEachStore('governance: Work Units', (kind) => {
  let gateway: TestGateway;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({
      store: kind,
      config: {
        projects: projectsWith((project) => {
          if (project.id === 'prj_a') {
            // 9 enabled Definitions in prj_a, so "at most 8" is tested on its own.
            for (const id of EXTRA)
              project.outcome_definitions.push({ id, version: 1, kind: 'BOOLEAN', enabled: true });
          } else {
            project.outcome_definitions.push({
              id: 'odef_b_only',
              version: 3,
              kind: 'BOOLEAN',
              enabled: true,
            });
          }
        }),
      },
    });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('creates a Work Unit: 201 with id, project_id, status open, created_at', async () => {
    const before = Date.now();
    const result = await api.post('/svc/v1/work-units', {});
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({ project_id: 'prj_a', status: 'open', closed_at: null });
    expect(result.body.id).toMatch(/^wku_[0-9A-Z]{26}$/);
    expect(result.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(result.body.created_at)).toBeGreaterThanOrEqual(before - 5);
    expect(result.headers.get('request-id')).toMatch(/^req_/);
  });

  it('without outcome_definition_ids freezes every enabled Definition (id and version), never a disabled one', async () => {
    const unit = await api.createWorkUnit({});
    const frozen = unit.outcome_definitions as Array<{ id: string; version: number }>;
    expect(frozen).toContainEqual({ id: 'odef_resolved', version: 1 });
    expect(frozen).toContainEqual({ id: 'odef_csat', version: 2 });
    expect(frozen.map((definition) => definition.id)).not.toContain('odef_retired');
    expect(frozen).toHaveLength(2 + EXTRA.length);
  });

  it('with outcome_definition_ids freezes exactly those', async () => {
    const unit = await api.createWorkUnit({ outcome_definition_ids: ['odef_csat'] });
    expect(unit.outcome_definitions).toEqual([{ id: 'odef_csat', version: 2 }]);
    // A Definition not frozen on the Work Unit cannot be reported against it.
    const report = await api.report(unit.id, resolvedOutcome(true));
    expectSvcError(report, 400, 'invalid_outcome');
    expect(report.body.error.message).toContain('definition_id');
  });

  it('accepts 8 outcome_definition_ids and refuses 9 with 400 invalid_request', async () => {
    const nine = ['odef_resolved', 'odef_csat', ...EXTRA];
    const eight = await api.post('/svc/v1/work-units', { outcome_definition_ids: nine.slice(0, 8) });
    expect(eight.status).toBe(201);
    expect(eight.body.outcome_definitions).toHaveLength(8);
    const tooMany = await api.post('/svc/v1/work-units', { outcome_definition_ids: nine });
    expectSvcError(tooMany, 400, 'invalid_request');
    expect(tooMany.body.error.message).toContain('outcome_definition_ids');
  });

  it('refuses unknown, disabled and other-Project Definition ids with 400 invalid_request', async () => {
    for (const id of ['odef_nope', 'odef_retired', 'odef_b_only']) {
      const result = await api.post('/svc/v1/work-units', { outcome_definition_ids: ['odef_resolved', id] });
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toContain(id);
    }
    // The same id is fine for the Project that owns it.
    const apiB = new Api(gateway.url, await gateway.key('prj_b'));
    const own = await apiB.createWorkUnit({ outcome_definition_ids: ['odef_b_only'] });
    expect(own.outcome_definitions).toEqual([{ id: 'odef_b_only', version: 3 }]);
  });

  it('refuses malformed outcome_definition_ids with 400 invalid_request', async () => {
    for (const body of [
      { outcome_definition_ids: 'odef_resolved' },
      { outcome_definition_ids: [1] },
      { outcome_definition_ids: ['odef_resolved', 'odef_resolved'] },
      { outcome_definition_ids: null },
    ]) {
      expectSvcError(await api.post('/svc/v1/work-units', body), 400, 'invalid_request');
    }
  });

  it('GET returns {work_unit, runs, outcomes}', async () => {
    const unit = await api.createWorkUnit({});
    const run = await api.createRun(unit.id);
    const result = await api.get(`/svc/v1/work-units/${unit.id}`);
    expect(result.status).toBe(200);
    expect(Object.keys(result.body).sort()).toEqual(['outcomes', 'runs', 'work_unit']);
    expect(result.body.work_unit).toEqual(unit);
    expect(result.body.runs).toHaveLength(1);
    expect(result.body.runs[0]).toMatchObject({ id: run.id, work_unit_id: unit.id, status: 'active' });
    expect(result.body.outcomes).toEqual([]);
  });

  it('GET lists every Outcome record, superseded ones included, ordered by governance_sequence', async () => {
    const unit = await api.createWorkUnit({});
    const first = await api.reportOk(unit.id, resolvedOutcome(false));
    const csat = await api.reportOk(unit.id, {
      definition_id: 'odef_csat',
      value: 'neutral',
      observed_at: '2025-12-31T13:00:00Z',
    });
    const second = await api.reportOk(unit.id, resolvedOutcome(true, first.id));
    const csat2 = await api.reportOk(unit.id, {
      definition_id: 'odef_csat',
      value: 'happy',
      observed_at: '2025-12-31T14:00:00Z',
      supersedes_outcome_id: csat.id,
    });
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.outcomes.map((outcome: { id: string }) => outcome.id)).toEqual([
      first.id,
      csat.id,
      second.id,
      csat2.id,
    ]);
    const sequences = view.outcomes.map(
      (outcome: { governance_sequence: number }) => outcome.governance_sequence,
    );
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    expect(new Set(sequences).size).toBe(4);
    expect(view.outcomes[2]).toEqual(second);
  });

  it('GET of an unknown Work Unit: 404 work_unit_not_found', async () => {
    expectSvcError(
      await api.get('/svc/v1/work-units/wku_00000000000000000000000000'),
      404,
      'work_unit_not_found',
    );
    expectSvcError(await api.get('/svc/v1/work-units/not-even-an-id'), 404, 'work_unit_not_found');
  });

  it('close: 201 with id, project_id, status closed, closed_at; GET shows it closed', async () => {
    const unit = await api.createWorkUnit({});
    const closed = await api.post(`/svc/v1/work-units/${unit.id}/close`, {});
    expect(closed.status).toBe(201);
    expect(closed.body).toMatchObject({
      id: unit.id,
      project_id: 'prj_a',
      status: 'closed',
      created_at: unit.created_at,
    });
    expect(Date.parse(closed.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(unit.created_at));
    const view = await api.get(`/svc/v1/work-units/${unit.id}`);
    expect(view.body.work_unit).toEqual(closed.body);
  });

  it('close replay with the same key: 200 and the same body', async () => {
    const unit = await api.createWorkUnit({});
    const key = newIdempotencyKey();
    const first = await api.post(`/svc/v1/work-units/${unit.id}/close`, {}, key);
    const replay = await api.post(`/svc/v1/work-units/${unit.id}/close`, {}, key);
    expect(first.status).toBe(201);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
  });

  it('closing a closed Work Unit with a new key: 200 and the record unchanged', async () => {
    const unit = await api.createWorkUnit({});
    const first = await api.closeWorkUnit(unit.id);
    const again = await api.post(`/svc/v1/work-units/${unit.id}/close`, {});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
  });

  it('close body must be {}: unknown fields are 400 invalid_request', async () => {
    const unit = await api.createWorkUnit({});
    const result = await api.post(`/svc/v1/work-units/${unit.id}/close`, { reason: 'done' });
    expectSvcError(result, 400, 'invalid_request');
    expect(result.body.error.message).toContain('reason');
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.work_unit.status).toBe('open');
  });

  it('close of an unknown Work Unit: 404 work_unit_not_found', async () => {
    expectSvcError(
      await api.post('/svc/v1/work-units/wku_00000000000000000000000000/close', {}),
      404,
      'work_unit_not_found',
    );
  });

  it('a closed Work Unit takes no new Run (409 work_unit_closed) but its Runs stay usable', async () => {
    const unit = await api.createWorkUnit({});
    const run = await api.createRun(unit.id);
    await api.closeWorkUnit(unit.id);
    const refused = await api.post('/svc/v1/runs', { work_unit_id: unit.id });
    expectSvcError(refused, 409, 'work_unit_closed');
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.runs).toHaveLength(1);
    expect(view.runs[0]).toMatchObject({ id: run.id, status: 'active' });
    // The Run can still be closed explicitly.
    const closed = await api.post(`/svc/v1/runs/${run.id}/close`, {});
    expect(closed.status).toBe(201);
  });

  it('unknown top-level fields on create are 400 invalid_request naming the field', async () => {
    const result = await api.post('/svc/v1/work-units', { name: 'x' });
    expectSvcError(result, 400, 'invalid_request');
    expect(result.body.error.message).toContain('name');
  });

  it('GET needs no body and ignores a query string', async () => {
    const unit = await api.createWorkUnit({});
    const result = await call(gateway.url, 'GET', `/svc/v1/work-units/${unit.id}?x=1`, { key: api.key });
    expect(result.status).toBe(200);
    expect(result.body.work_unit.id).toBe(unit.id);
  });
});
