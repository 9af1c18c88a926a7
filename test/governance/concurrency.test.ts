/**
 * Concurrency over HTTP: identical POSTs racing on one Idempotency-Key make exactly one resource;
 * 40 Run creations racing on one Work Unit stop at exactly 32; two revisions racing on one head
 * leave exactly one winner. On SQLite writes are serial; on PostgreSQL these hit row locks and
 * unique indexes for real.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CallResult, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Api, describeEachStore, expectSvcError, newIdempotencyKey, resolvedOutcome } from './support.js';

function countBy(results: CallResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1;
  return counts;
}

describeEachStore('governance: concurrency over HTTP', (kind) => {
  let gateway: TestGateway;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    api = new Api(gateway.url, await gateway.key('prj_a'));
  });
  afterAll(async () => gateway?.close());

  it('20 identical Run creations with one Idempotency-Key: one 201, the rest 200 (or 409 in flight), one Run', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    const body = { work_unit_id: unit.id, budget_micros_usd: 1234 };
    const results = await Promise.all(Array.from({ length: 20 }, () => api.post('/svc/v1/runs', body, key)));
    const counts = countBy(results);
    expect(counts[201]).toBe(1);
    expect((counts[200] ?? 0) + (counts[409] ?? 0)).toBe(19);
    const created = results.find((result) => result.status === 201)!;
    for (const result of results) {
      if (result.status === 200) expect(result.body).toEqual(created.body);
      if (result.status === 409) expectSvcError(result, 409, 'idempotency_conflict');
    }
    const runs = (await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0].id).toBe(created.body.id);
  });

  it('20 identical Work Unit creations with one Idempotency-Key: one 201 and every 200 names the same Work Unit', async () => {
    const key = newIdempotencyKey();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.post('/svc/v1/work-units', {}, key)),
    );
    const counts = countBy(results);
    expect(counts[201]).toBe(1);
    expect((counts[200] ?? 0) + (counts[409] ?? 0)).toBe(19);
    const ids = new Set(results.filter((result) => result.status < 300).map((result) => result.body.id));
    expect(ids.size).toBe(1);
    // After the race, a replay is a plain 200.
    const replay = await api.post('/svc/v1/work-units', {}, key);
    expect(replay.status).toBe(200);
    expect(ids.has(replay.body.id)).toBe(true);
  });

  it('40 concurrent Run creations on one Work Unit: exactly 32 x 201 and 8 x 429 governance_resource_limit', async () => {
    const unit = await api.createWorkUnit();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        api.post('/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: index + 1 }),
      ),
    );
    const counts = countBy(results);
    expect(counts).toEqual({ 201: 32, 429: 8 });
    for (const result of results)
      if (result.status === 429) expectSvcError(result, 429, 'governance_resource_limit');
    const runs = (await api.get(`/svc/v1/work-units/${unit.id}`)).body.runs as Array<{ id: string }>;
    expect(runs).toHaveLength(32);
    const createdIds = results
      .filter((result) => result.status === 201)
      .map((result) => result.body.id as string);
    expect(new Set(runs.map((run) => run.id))).toEqual(new Set(createdIds));
  });

  it('two concurrent revisions of one head: one 201, one 409 outcome_revision_conflict', async () => {
    const unit = await api.createWorkUnit();
    const head = await api.reportOk(unit.id, resolvedOutcome(false));
    const results = await Promise.all([
      api.report(unit.id, resolvedOutcome(true, head.id)),
      api.report(unit.id, { ...resolvedOutcome(true, head.id), evidence_ref: 'OTHER-1' }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
    const loser = results.find((result) => result.status === 409)!;
    expectSvcError(loser, 409, 'outcome_revision_conflict');
    const winner = results.find((result) => result.status === 201)!;
    expect(winner.body).toMatchObject({ revision: 2, supersedes_outcome_id: head.id });
    const outcomes = (await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes;
    expect(outcomes.map((outcome: { id: string }) => outcome.id)).toEqual([head.id, winner.body.id]);
  });

  it('ten concurrent revisions of one head: exactly one wins', async () => {
    const unit = await api.createWorkUnit();
    const head = await api.reportOk(unit.id, resolvedOutcome(false));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        api.report(unit.id, { ...resolvedOutcome(true, head.id), evidence_ref: `R-${index}` }),
      ),
    );
    expect(countBy(results)).toEqual({ 201: 1, 409: 9 });
    for (const result of results)
      if (result.status === 409) expectSvcError(result, 409, 'outcome_revision_conflict');
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toHaveLength(2);
  });

  it('concurrent first reports for one Definition: exactly one becomes the head', async () => {
    const unit = await api.createWorkUnit();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        api.report(unit.id, { ...resolvedOutcome(index % 2 === 0), evidence_ref: `F-${index}` }),
      ),
    );
    expect(countBy(results)).toEqual({ 201: 1, 409: 5 });
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toHaveLength(1);
  });

  it('a close racing Run creations: every Run created before the close counts, none after', async () => {
    const unit = await api.createWorkUnit();
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () => api.post('/svc/v1/runs', { work_unit_id: unit.id })),
      api.post(`/svc/v1/work-units/${unit.id}/close`, {}),
      ...Array.from({ length: 10 }, () => api.post('/svc/v1/runs', { work_unit_id: unit.id })),
    ]);
    const close = results[10]!;
    expect(close.status).toBe(201);
    const runResults = results.filter((_, index) => index !== 10);
    for (const result of runResults) {
      expect([201, 409]).toContain(result.status);
      if (result.status === 409) expectSvcError(result, 409, 'work_unit_closed');
    }
    const view = (await api.get(`/svc/v1/work-units/${unit.id}`)).body;
    expect(view.runs).toHaveLength(runResults.filter((result) => result.status === 201).length);
    for (const run of view.runs)
      expect(Date.parse(run.created_at)).toBeLessThanOrEqual(Date.parse(view.work_unit.closed_at));
  });
});
