/**
 * Lists and reports over HTTP on both stores, against known traffic: every report figure equals
 * the one recomputed independently from the audit trail; lists page through everything once in a
 * stable order; bad filters and cursors are 400s naming the parameter.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore, expectSvcError, type Json } from '../governance/support.js';
import { call } from '../support/gateway.js';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';
import { auditOf, costPerOutcome, spendByDayAndAlias, type UnitFacts } from './recompute.js';
import { driveTraffic, type Traffic, VENDORA } from './traffic.js';

const HOUR = 3_600_000;

describeEachStore('lists and reports', (kind) => {
  let gateway: SimulatedGateway;
  let key: string;
  let traffic: Traffic;
  const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR).toISOString();
  const to = new Date(Math.floor(Date.now() / HOUR) * HOUR + 2 * HOUR).toISOString();
  const get = (path: string, headers: Record<string, string> = {}, secret = key) =>
    call(gateway.url, 'GET', path, { key: secret, headers });

  beforeAll(async () => {
    gateway = await startSimulatedGateway({ store: kind });
    key = await gateway.key('prj_a');
    traffic = await driveTraffic(gateway, key);
  }, 60_000);
  afterAll(async () => gateway?.close());

  it('spend by day and alias equals the audit trail, refusals and unknown attempts included', async () => {
    const report = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=day,alias`);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const audit = await auditOf(gateway.store, 'prj_a');
    expect(audit.some((entry) => entry.state === 'unknown')).toBe(true);
    const expected = spendByDayAndAlias(audit, from, to);
    const rows = report.body.rows as Json[];
    for (const row of expected.rows) {
      const got = rows.find((candidate) => candidate.bucket === row.bucket && candidate.alias === row.alias);
      expect(got).toMatchObject(row);
    }
    expect(report.body.totals).toMatchObject(expected.total);
    expect(report.body.totals.unknown_attempts).toBe(1);
    expect(report.body.totals.refused_reservations).toBe(2);
    expect(rows.find((row) => row.alias === VENDORA)?.refused_reservations).toBe(2);
  });

  it('spend totals match for every grouping, and the CSV carries the same figures', async () => {
    const audit = await auditOf(gateway.store, 'prj_a');
    const expected = spendByDayAndAlias(audit, from, to).total;
    for (const groupBy of [
      'hour',
      'connection',
      'upstream_model',
      'key',
      'day,alias,connection,upstream_model,key',
    ]) {
      const report = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=${groupBy}`);
      expect(report.status).toBe(200);
      expect(report.body.totals, groupBy).toMatchObject(expected);
    }
    const csv = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=alias`, {
      accept: 'text/csv',
    });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...lines] = String(csv.body).trim().split('\r\n');
    expect(header).toBe(
      'alias,calls,input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens,committed_micros_usd,unknown_attempts,unknown_micros_usd,refused_reservations',
    );
    const committed = lines.reduce((sum, line) => sum + Number(line.split(',')[6]), 0);
    expect(committed).toBe(expected.committed_micros_usd);
  });

  it('cost per Outcome equals the recomputation from the audit trail and the head revisions', async () => {
    const audit = await auditOf(gateway.store, 'prj_a');
    const units: Array<UnitFacts & { csat: UnitFacts['head'] }> = [];
    for (const workUnit of traffic.workUnits) {
      const view = (await get(`/svc/v1/work-units/${workUnit.id}`)).body;
      const runIds = new Set((view.runs as Json[]).map((run) => run.id));
      const spend = audit
        .filter((entry) => entry.runId !== null && runIds.has(entry.runId))
        .reduce((s, e) => s + e.costMicrosUsd, 0);
      const headOf = (definition: string) => {
        const records = (view.outcomes as Json[]).filter((outcome) => outcome.definition_id === definition);
        const superseded = new Set(records.map((outcome) => outcome.supersedes_outcome_id));
        const head = records.find((outcome) => !superseded.has(outcome.id));
        return head ? { value: head.value, provisional: head.provisional } : null;
      };
      units.push({ spend, head: headOf('odef_resolved'), csat: headOf('odef_csat') });
    }
    const resolved = await get(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${from}&to=${to}`,
    );
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body.total_spend_micros_usd).toBe(units.reduce((sum, unit) => sum + unit.spend, 0));
    expect(resolved.body.groups).toMatchObject(costPerOutcome(units, [true, false]));
    expect(resolved.body.groups[0]).toMatchObject({ value: true, work_units: 3, provisional_work_units: 2 });
    const csat = await get(`/svc/v1/reports/cost-per-outcome?definition_id=odef_csat&from=${from}&to=${to}`);
    expect(csat.body.groups).toMatchObject(
      costPerOutcome(
        units.map((unit) => ({ spend: unit.spend, head: unit.csat })),
        ['happy', 'neutral', 'unhappy'],
      ),
    );
    const csv = await get(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${from}&to=${to}`,
      {
        accept: 'text/csv',
      },
    );
    expect(String(csv.body).split('\r\n')[1]).toBe(
      Object.values(resolved.body.groups[0])
        .map((value) => (value === null ? '' : String(value)))
        .join(','),
    );
  });

  it('lists page through every Work Unit and Run once, newest first, and filter them', async () => {
    const seen: string[] = [];
    let path = '/svc/v1/work-units?limit=2';
    for (;;) {
      const page = await get(path);
      expect(page.status).toBe(200);
      seen.push(...(page.body.data as Json[]).map((unit) => unit.id));
      if (!page.body.has_more) break;
      path = `/svc/v1/work-units?limit=2&cursor=${page.body.next_cursor}`;
    }
    expect(seen).toEqual(traffic.workUnits.map((unit) => unit.id).reverse());
    const closed = await get('/svc/v1/work-units?status=closed');
    expect((closed.body.data as Json[]).map((unit) => unit.id)).toEqual([traffic.workUnits[1]!.id]);
    const runs = await get(
      `/svc/v1/runs?work_unit_id=${traffic.workUnits[2]!.id}&status=active&budget_state=available`,
    );
    expect((runs.body.data as Json[]).map((run) => run.id)).toEqual([traffic.runs[2]!.id]);
    expect((await get('/svc/v1/runs?budget_state=depleted')).body.data).toEqual([]);
  });

  it("lists Outcomes by definition, value and head, and a Run's attempts with tokens and cost", async () => {
    const heads = await get('/svc/v1/outcomes?definition_id=odef_resolved&value=true&head=true');
    expect((heads.body.data as Json[]).map((outcome) => outcome.work_unit_id).sort()).toEqual(
      [traffic.workUnits[0]!.id, traffic.workUnits[1]!.id, traffic.workUnits[3]!.id].sort(),
    );
    const happy = await get('/svc/v1/outcomes?definition_id=odef_csat&value=happy&limit=1');
    expect(happy.body.has_more).toBe(true);
    const attempts = await get(`/svc/v1/runs/${traffic.runs[1]!.id}/attempts?limit=1`);
    expect(attempts.body.data[0]).toMatchObject({
      run_id: traffic.runs[1]!.id,
      alias: VENDORA,
      state: 'settled',
      unknown: false,
    });
    const rest = await get(
      `/svc/v1/runs/${traffic.runs[1]!.id}/attempts?cursor=${attempts.body.next_cursor}`,
    );
    expect((rest.body.data as Json[]).map((attempt) => attempt.unknown)).toEqual([false, true]);
  });

  it('answers what the OpenAPI document says (lists, attempts, both reports)', async () => {
    const document = (await get('/svc/v1/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
    const check = async (name: string, path: string) => {
      const validate = ajv.getSchema(`openapi#/components/schemas/${name}`)!;
      const body = (await get(path)).body;
      expect(validate(body), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    await check('WorkUnitList', '/svc/v1/work-units?limit=2');
    await check('RunList', '/svc/v1/runs');
    await check('OutcomeList', '/svc/v1/outcomes');
    await check('OutcomeDefinitionList', '/svc/v1/outcome-definitions');
    await check('AttemptList', `/svc/v1/runs/${traffic.runs[1]!.id}/attempts`);
    await check(
      'SpendReport',
      `/svc/v1/reports/spend?from=${from}&to=${to}&group_by=hour,alias,connection,upstream_model,key`,
    );
    await check(
      'CostPerOutcomeReport',
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_csat&from=${from}&to=${to}`,
    );
  });

  it('answers bad parameters with a 400 naming the parameter, and scopes and Projects hold', async () => {
    const cases: Array<[string, string]> = [
      ['/svc/v1/work-units?cursor=bm9wZQ', 'cursor'],
      [`/svc/v1/runs?cursor=${(await get('/svc/v1/work-units?limit=1')).body.next_cursor}`, 'cursor'],
      ['/svc/v1/work-units?limit=500', 'limit'],
      ['/svc/v1/work-units?status=done', 'status'],
      ['/svc/v1/work-units?created_from=yesterday', 'created_from'],
      ['/svc/v1/work-units?colour=red', 'colour'],
      ['/svc/v1/outcomes?value=true', 'value'],
      ['/svc/v1/reports/spend?group_by=week', 'group_by'],
      ['/svc/v1/reports/spend?from=2026-01-01T00:30:00Z', 'from'],
      [`/svc/v1/reports/spend?from=${to}&to=${from}`, 'from'],
      ['/svc/v1/reports/cost-per-outcome', 'definition_id'],
      ['/svc/v1/reports/cost-per-outcome?definition_id=odef_nope', 'definition_id'],
    ];
    for (const [path, parameter] of cases) {
      const result = await get(path);
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message, path).toContain(parameter);
    }
    expectSvcError(await get('/svc/v1/runs/run_unknown/attempts'), 404, 'run_not_found');
    const writer = await gateway.key('prj_a', ['work_unit:create']);
    expectSvcError(await get('/svc/v1/reports/spend', {}, writer), 403, 'gateway_key_scope_denied');
    const other = await gateway.key('prj_b');
    expect((await get('/svc/v1/work-units', {}, other)).body.data).toEqual([]);
    expect((await get(`/svc/v1/reports/spend?from=${from}&to=${to}`, {}, other)).body.totals.calls).toBe(0);
  });
});
