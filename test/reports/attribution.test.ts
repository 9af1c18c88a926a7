/**
 * Spend and cost per Outcome by attribute over HTTP on both stores: calls tagged with Svc-Tags, with
 * and without Runs, on Work Units and Runs with metadata; every figure of the reports grouped by a
 * tag or a metadata key equals an independent recomputation from the audit trail (plain loops, no
 * report code); CSV columns; bad group_by values are 400s naming the parameter.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/store/port.js';
import { Api, describeEachStore, expectSvcError, type Json } from '../governance/support.js';
import { call } from '../support/gateway.js';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';
import { auditOf, type Totals } from './recompute.js';
import { CHAT, VENDORA } from './traffic.js';

const HOUR = 3_600_000;
const PROJECT = 'prj_a';

const FIGURES = [
  'calls',
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'committed_micros_usd',
  'unknown_attempts',
  'unknown_micros_usd',
] as const;

/** Spend per group of the audit entries reserved in [from, to), `groupOf` naming each one's group. */
function spendBy(entries: AuditEntry[], from: string, to: string, groupOf: (entry: AuditEntry) => string) {
  const groups = new Map<string, Totals>();
  for (const entry of entries) {
    if (entry.createdAt < from || entry.createdAt >= to) continue;
    const group = groupOf(entry);
    const totals = groups.get(group) ?? Object.fromEntries(FIGURES.map((figure) => [figure, 0]));
    groups.set(group, totals as Totals);
    const sums = totals as Totals;
    sums.calls += 1;
    sums.input_tokens += entry.usage?.inputTokens ?? 0;
    sums.output_tokens += entry.usage?.outputTokens ?? 0;
    sums.cache_creation_input_tokens += entry.usage?.cacheCreationInputTokens ?? 0;
    sums.cache_read_input_tokens += entry.usage?.cacheReadInputTokens ?? 0;
    sums.committed_micros_usd += entry.costMicrosUsd;
    if (entry.state === 'unknown') {
      sums.unknown_attempts += 1;
      sums.unknown_micros_usd += entry.costMicrosUsd;
    }
  }
  return groups;
}

function figuresOf(row: Json): Totals {
  return Object.fromEntries(FIGURES.map((figure) => [figure, row[figure]])) as unknown as Totals;
}

describeEachStore('spend and cost per Outcome by attribute', (kind) => {
  let gateway: SimulatedGateway;
  let key: string;
  let api: Api;
  const units: Record<string, Json> = {};
  const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - 24 * HOUR).toISOString();
  const to = new Date(Math.floor(Date.now() / HOUR) * HOUR + 2 * HOUR).toISOString();
  const get = (path: string, headers: Record<string, string> = {}) =>
    call(gateway.url, 'GET', path, { key, headers });

  async function modelCall(runId: string | null, tags: string | null, model = VENDORA, usage = 100) {
    gateway.simulator.setBehaviour({ usage: { input_tokens: usage, output_tokens: 7 } }, { times: 1 });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
        ...(runId === null ? {} : { 'x-svc-run-id': runId }),
        ...(tags === null ? {} : { 'svc-tags': tags }),
      },
      body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello.' }] }),
    });
    const text = await response.text();
    return { status: response.status, text };
  }

  beforeAll(async () => {
    gateway = await startSimulatedGateway({ store: kind });
    key = await gateway.key(PROJECT);
    api = new Api(gateway.url, key);
    units.acme = await api.createWorkUnit({ metadata: { customer: 'acme', plan: 'pro' } });
    units.globex = await api.createWorkUnit({ metadata: { customer: 'globex', plan: '' } });
    units.bare = await api.createWorkUnit();
    const draft = await api.createRun(units.acme.id, {
      budget_micros_usd: 5_000_000,
      metadata: { stage: 'draft' },
    });
    // The Run's metadata wins over its Work Unit's on a shared key (the audit rows carry the overlay).
    const eu = await api.createRun(units.acme.id, {
      budget_micros_usd: 5_000_000,
      metadata: { customer: 'acme-eu' },
    });
    const globex = await api.createRun(units.globex.id, { budget_micros_usd: 5_000_000 });
    const bare = await api.createRun(units.bare.id, { budget_micros_usd: 5_000_000 });
    const calls: Array<[string | null, string | null, string, number]> = [
      [draft.id, 'team=search, feature=draft', VENDORA, 100],
      [draft.id, 'team=search,feature=review', CHAT, 230],
      [eu.id, 'team=ads', VENDORA, 310],
      [globex.id, 'team=ads, feature=draft', VENDORA, 120],
      [globex.id, null, CHAT, 90],
      [bare.id, 'feature=draft', VENDORA, 50],
      [null, 'team=search', VENDORA, 400],
      [null, null, CHAT, 60],
    ];
    for (const [runId, tags, model, usage] of calls) {
      const result = await modelCall(runId, tags, model, usage);
      expect(result.status, result.text).toBe(200);
    }
    // An attempt whose cost cannot be known, tagged: it counts at its whole reservation.
    gateway.simulator.setBehaviour({ dropBeforeResponse: true }, { times: 1 });
    const dropped = await modelCall(globex.id, 'team=search', VENDORA);
    expect(dropped.status).toBeGreaterThanOrEqual(500);
    const outcome = (value: boolean) => ({
      definition_id: 'odef_resolved',
      value,
      observed_at: new Date().toISOString(),
    });
    await api.reportOk(units.acme.id, outcome(true));
    await api.reportOk(units.globex.id, outcome(false));
  }, 60_000);
  afterAll(async () => gateway?.close());

  async function expectSpendBy(
    groupBy: string,
    groupOf: (entry: AuditEntry) => string,
    key: (row: Json) => string,
  ) {
    const report = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=${groupBy}`);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const audit = await auditOf(gateway.store, PROJECT);
    const expected = spendBy(audit, from, to, groupOf);
    const rows = report.body.rows as Json[];
    expect(new Map(rows.map((row) => [key(row), figuresOf(row)]))).toEqual(expected);
    const all = spendBy(audit, from, to, () => '');
    expect(figuresOf(report.body.totals)).toEqual(all.get(''));
    return rows;
  }

  it('groups spend by a tag exactly, calls without the tag in the group null', async () => {
    const rows = await expectSpendBy(
      'tag.team',
      (entry) => String(entry.tags?.team ?? null),
      (row) => String(row['tag.team']),
    );
    expect(rows.map((row) => row['tag.team'])).toEqual([null, 'ads', 'search']);
    expect(rows[2]!.unknown_attempts).toBe(1);
    expect(Object.keys(rows[0]!).slice(0, 2)).toEqual(['tag.team', 'calls']);
  });

  it('groups spend by a metadata key (the Run over its Work Unit) by day, and with a dimension', async () => {
    const day = (entry: AuditEntry) => `${entry.createdAt.slice(0, 10)}T00:00:00.000Z`;
    const rows = await expectSpendBy(
      'day,metadata.customer',
      (entry) => `${day(entry)}|${entry.metadata?.customer ?? null}`,
      (row) => `${row.bucket}|${row['metadata.customer']}`,
    );
    expect(new Set(rows.map((row) => row['metadata.customer']))).toEqual(
      new Set([null, 'acme', 'acme-eu', 'globex']),
    );
    await expectSpendBy(
      'metadata.plan,alias',
      (entry) => `${entry.metadata?.plan ?? null}|${entry.alias}`,
      (row) => `${row['metadata.plan']}|${row.alias}`,
    );
    await expectSpendBy(
      'hour,tag.feature,upstream_model,key',
      (entry) =>
        `${entry.createdAt.slice(0, 13)}|${entry.tags?.feature ?? null}|${entry.upstreamModel}|${entry.keyId}`,
      (row) => `${String(row.bucket).slice(0, 13)}|${row['tag.feature']}|${row.upstream_model}|${row.key_id}`,
    );
  });

  it('tells an empty metadata value from its absence in JSON, and writes the attribute column in CSV', async () => {
    const report = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=metadata.plan`);
    expect((report.body.rows as Json[]).map((row) => row['metadata.plan'])).toEqual([null, '', 'pro']);
    const csv = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=day,tag.team`, {
      accept: 'text/csv',
    });
    const [header, ...lines] = String(csv.body).trim().split('\r\n');
    expect(header).toBe(
      'bucket,tag.team,calls,input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens,committed_micros_usd,unknown_attempts,unknown_micros_usd,refused_reservations',
    );
    const json = await get(`/svc/v1/reports/spend?from=${from}&to=${to}&group_by=day,tag.team`);
    expect(lines).toEqual(
      (json.body.rows as Json[]).map((row) =>
        Object.values(row)
          .map((value) => (value === null ? '' : String(value)))
          .join(','),
      ),
    );
  });

  it('refuses a bad group_by with a 400 naming it and the key syntax', async () => {
    for (const groupBy of ['tag.', 'tag.1team', 'metadata.a b', `tag.${'k'.repeat(65)}`, 'tags.team']) {
      const result = await get(`/svc/v1/reports/spend?group_by=${encodeURIComponent(groupBy)}`);
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toMatch(/group_by/);
    }
    const keySyntax = await get('/svc/v1/reports/spend?group_by=tag.9');
    expect(keySyntax.body.error.message).toMatch(/1-64 characters/);
    for (const groupBy of ['tag.team,metadata.customer', 'tag.team,tag.team']) {
      const result = await get(`/svc/v1/reports/spend?group_by=${groupBy}`);
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toMatch(/group_by/);
    }
    for (const groupBy of ['alias', 'tag.team,metadata.plan', 'metadata.', 'day']) {
      const result = await get(
        `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&group_by=${groupBy}`,
      );
      expectSvcError(result, 400, 'invalid_request');
      expect(result.body.error.message).toMatch(/group_by/);
    }
  });

  /** Each Work Unit's spend from the audit trail (its Runs' attempts), keyed by Work Unit id. */
  async function unitSpend(part: (entry: AuditEntry) => string | null) {
    const audit = await auditOf(gateway.store, PROJECT);
    const parts = new Map<string, Map<string | null, number>>();
    for (const unit of Object.values(units)) parts.set(unit.id, new Map());
    for (const entry of audit) {
      const unit = entry.workUnitId;
      if (unit === null || unit === undefined || !parts.has(unit)) continue;
      const byValue = parts.get(unit)!;
      byValue.set(part(entry), (byValue.get(part(entry)) ?? 0) + entry.costMicrosUsd);
    }
    return parts;
  }

  it("groups cost per Outcome by a Work Unit's own metadata key", async () => {
    const report = await get(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${from}&to=${to}&group_by=metadata.customer`,
    );
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.group_by).toBe('metadata.customer');
    const spend = await unitSpend(() => null);
    const of = (unit: string) => spend.get(units[unit]!.id)!.get(null) ?? 0;
    const groups = report.body.groups as Json[];
    const find = (customer: string | null, value: boolean | null) =>
      groups.find((group) => group['metadata.customer'] === customer && group.value === value)!;
    // acme's Run with customer=acme-eu still counts under its Work Unit's own value, acme.
    expect(find('acme', true)).toMatchObject({
      work_units: 1,
      total_spend_micros_usd: of('acme'),
      cost_per_value_micros_usd: of('acme'),
    });
    expect(find('globex', false)).toMatchObject({ work_units: 1, total_spend_micros_usd: of('globex') });
    expect(find(null, null)).toMatchObject({ work_units: 1, total_spend_micros_usd: of('bare') });
    expect(report.body.total_spend_micros_usd).toBe(of('acme') + of('globex') + of('bare'));
    expect(report.body.work_units).toBe(3);
    const csv = await get(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${from}&to=${to}&group_by=metadata.customer`,
      { accept: 'text/csv' },
    );
    expect(String(csv.body).split('\r\n')[0]).toBe(
      'metadata.customer,value,work_units,provisional_work_units,total_spend_micros_usd,spend_per_work_unit_micros_usd,median_spend_micros_usd,p90_spend_micros_usd,cost_per_value_micros_usd,unknown_attempts',
    );
  });

  it("splits each Work Unit's spend by the tag of its attempts for cost per Outcome by tag", async () => {
    const report = await get(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${from}&to=${to}&group_by=tag.team`,
    );
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const parts = await unitSpend((entry) => entry.tags?.team ?? null);
    const groups = report.body.groups as Json[];
    const head: Record<string, boolean | null> = {
      [units.acme!.id]: true,
      [units.globex!.id]: false,
      [units.bare!.id]: null,
    };
    for (const team of [null, 'search', 'ads']) {
      const members = [...parts].filter(([, byValue]) => byValue.has(team));
      const partitionTotal = members.reduce((sum, [, byValue]) => sum + byValue.get(team)!, 0);
      for (const value of [true, false, null]) {
        const inGroup = members.filter(([unit]) => head[unit] === value);
        const group = groups.find((candidate) => candidate['tag.team'] === team && candidate.value === value);
        expect(group, `${team} ${value}`).toMatchObject({
          work_units: inGroup.length,
          total_spend_micros_usd: inGroup.reduce((sum, [, byValue]) => sum + byValue.get(team)!, 0),
          cost_per_value_micros_usd:
            value === null || inGroup.length === 0 ? null : Math.round(partitionTotal / inGroup.length),
        });
      }
    }
    const total = groups.reduce((sum, group) => sum + group.total_spend_micros_usd, 0);
    expect(total).toBe(report.body.total_spend_micros_usd);
    expect(report.body.work_units).toBe(3);
  });
});
