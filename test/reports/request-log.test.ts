/**
 * The request log over HTTP on both stores (GET /svc/v1/attempts, /svc/v1/attempts/{id}) against
 * known traffic: calls with and without a Run, tagged and not, a fallback, vendora and vendorb
 * faces. Every call's svc-attempt-id is in the log once with its route, tokens, cost, timings and
 * ids; the filters and keyset pages select exactly the expected attempts; another Project's ids
 * are 404s; bad filters, tags and metadata are 400s in each endpoint's dialect, before anything
 * is reserved.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LoggedAttemptList, LoggedAttemptSchema } from '../../src/reports/request-log-schemas.js';
import { describeEachStore, expectSvcError, type Json } from '../governance/support.js';
import { Governance, messageBody, postMessages } from '../messages/support.js';
import { call } from '../support/gateway.js';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';

const DIRECT = 'vendora.messages.2023-06-01';
const COMPAT = 'compat.chat-embeddings.v1';
const ajv = new Ajv({ strict: false });
addFormats.default(ajv);
const validAttempt = ajv.compile(LoggedAttemptSchema);
const validList = ajv.compile(LoggedAttemptList);

describeEachStore('request log', (kind) => {
  let gateway: SimulatedGateway;
  let key: string;
  let otherKey: string;
  const calls: Record<string, { attemptId: string; status: number }> = {};
  let unit: Json;
  let run: Json;
  const get = (path: string, secret = key) => call(gateway.url, 'GET', path, { key: secret });
  const listIds = async (query: string) => {
    const page = await get(`/svc/v1/attempts?limit=200&${query}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return (page.body.data as Json[]).map((attempt) => attempt.id as string);
  };

  beforeAll(async () => {
    gateway = await startSimulatedGateway({ store: kind });
    key = await gateway.key('prj_a');
    otherKey = await gateway.key('prj_b');
    const governance = new Governance(gateway.url, key);
    unit = (await governance.post('/svc/v1/work-units', { metadata: { team: 'search', tier: 'gold' } })).body;
    const created = await governance.post('/svc/v1/runs', {
      work_unit_id: unit.id,
      budget_micros_usd: 10_000_000,
      metadata: { customer: 'acme', tier: 'silver' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    run = created.body;
    const messages = async (name: string, model: string, headers: Record<string, string>) => {
      const answer = await postMessages(gateway.url, key, messageBody(model), headers);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      calls[name] = { attemptId: answer.headers.get('svc-attempt-id')!, status: answer.status };
    };
    await messages('plain', `m:${DIRECT}`, {});
    await messages('tagged', `m:${DIRECT}`, { 'svc-tags': ' team=search , feature=auto.complete:v2 ' });
    await messages('withRun', `m:${DIRECT}`, { 'x-svc-run-id': run.id, 'svc-tags': 'team=ads' });
    gateway.simulator.setBehaviour({ status: 500 }, { model: 'up-first', times: 1 });
    await messages('fallback', 'fallback', { 'x-svc-run-id': run.id });
    const chat = await call(gateway.url, 'POST', '/v1/chat/completions', {
      key: otherKey,
      headers: { 'svc-tags': 'team=other' },
      body: { model: `m:${COMPAT}`, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status, JSON.stringify(chat.body)).toBe(200);
    calls.otherProject = { attemptId: chat.headers.get('svc-attempt-id')!, status: 200 };
  }, 60_000);
  afterAll(async () => gateway?.close());

  it('lists every attempt of the Project once, newest first, fallback attempts sharing their call id', async () => {
    const page = await get('/svc/v1/attempts');
    expect(page.status).toBe(200);
    expect(validList(page.body), JSON.stringify(validList.errors)).toBe(true);
    const data = page.body.data as Json[];
    // Four calls, five attempts: the fallback's failed first attempt is one more.
    expect(data).toHaveLength(5);
    expect(page.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const ids = data.map((attempt) => attempt.id);
    for (const name of ['plain', 'tagged', 'withRun', 'fallback'])
      expect(
        ids.filter((id) => id === calls[name]!.attemptId),
        name,
      ).toHaveLength(1);
    expect(ids).not.toContain(calls.otherProject!.attemptId);
    const times = data.map((attempt) => `${attempt.created_at} ${attempt.id}`);
    expect(times).toEqual([...times].sort().reverse());
    const answered = data.find((attempt) => attempt.id === calls.fallback!.attemptId)!;
    const failed = data.find(
      (attempt) => attempt.call_id === answered.call_id && attempt.id !== answered.id,
    )!;
    expect(failed).toMatchObject({
      outcome: 'refused_upstream',
      http_status: 500,
      connection: DIRECT,
      cost_micros_usd: 0,
      run_id: run.id,
    });
    expect(answered.route).toEqual({
      index: 1,
      tried: [{ attempt_id: failed.id, connection: DIRECT, outcome: 'refused_upstream', error: 'http_5xx' }],
      skipped: [],
    });
    expect(new Set(data.map((attempt) => attempt.call_id)).size).toBe(4);
  });

  it('gives one attempt in full: route, tokens, reservation and cost, timings, upstream request id, attributes', async () => {
    const detail = await get(`/svc/v1/attempts/${calls.withRun!.attemptId}`);
    expect(detail.status).toBe(200);
    expect(validAttempt(detail.body), JSON.stringify(validAttempt.errors)).toBe(true);
    expect(detail.body).toMatchObject({
      id: calls.withRun!.attemptId,
      object: 'attempt',
      state: 'settled',
      outcome: 'completed',
      http_status: 200,
      endpoint: '/v1/messages',
      alias: `m:${DIRECT}`,
      connection: DIRECT,
      profile: DIRECT,
      upstream_model: `up-${DIRECT}`,
      run_id: run.id,
      work_unit_id: unit.id,
      tags: { team: 'ads' },
      metadata: { team: 'search', tier: 'silver', customer: 'acme' },
      route: { index: 0, tried: [], skipped: [] },
    });
    const body = detail.body;
    expect(body.call_id).toMatch(/^call_/);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
    expect(body.cost_micros_usd).toBeGreaterThan(0);
    expect(body.reservation_micros_usd).toBeGreaterThanOrEqual(body.cost_micros_usd);
    expect(body.timings.first_byte_ms).toBeGreaterThanOrEqual(0);
    expect(body.timings.total_ms).toBeGreaterThanOrEqual(body.timings.first_byte_ms);
    expect(body.upstream_request_id).toMatch(/^req_/);
    const plain = (await get(`/svc/v1/attempts/${calls.plain!.attemptId}`)).body;
    expect(plain).toMatchObject({ run_id: null, work_unit_id: null, tags: null, metadata: null });
    const tagged = (await get(`/svc/v1/attempts/${calls.tagged!.attemptId}`)).body;
    expect(tagged.tags).toEqual({ team: 'search', feature: 'auto.complete:v2' });
  });

  it('filters by every column, tag and metadata, and pages by keyset', async () => {
    const all = await listIds('');
    const { plain, tagged, withRun, fallback } = calls;
    expect(await listIds('tag.team=search')).toEqual([tagged!.attemptId]);
    expect(await listIds('tag.team=ads')).toEqual([withRun!.attemptId]);
    expect(await listIds('tag.team=search&tag.feature=auto.complete:v2')).toEqual([tagged!.attemptId]);
    expect(await listIds('tag.team=search&tag.feature=other')).toEqual([]);
    const ofRun = await listIds(`run_id=${run.id}`);
    expect(ofRun).toHaveLength(3);
    expect(ofRun).toContain(withRun!.attemptId);
    expect(await listIds(`work_unit_id=${unit.id}`)).toEqual(ofRun);
    expect(await listIds('metadata.customer=acme')).toEqual(ofRun);
    expect(await listIds('metadata.tier=silver&metadata.team=search')).toEqual(ofRun);
    expect(await listIds('metadata.tier=gold')).toEqual([]);
    expect(await listIds('outcome=refused_upstream')).toHaveLength(1);
    expect(await listIds('http_status=500')).toEqual(await listIds('outcome=refused_upstream'));
    expect(await listIds('alias=fallback')).toHaveLength(2);
    expect(await listIds(`connection=${COMPAT}`)).toEqual([fallback!.attemptId]);
    expect(await listIds(`upstream_model=up-second`)).toEqual([fallback!.attemptId]);
    const entry = (await get(`/svc/v1/attempts/${plain!.attemptId}`)).body;
    expect(await listIds(`key_id=${entry.key_id}`)).toEqual(all);
    expect(await listIds('key_id=key_nobody')).toEqual([]);
    expect(
      await listIds(
        `from=${encodeURIComponent(entry.created_at)}&to=${encodeURIComponent(entry.created_at)}`,
      ),
    ).toEqual([]);
    expect(await listIds(`to=${encodeURIComponent(entry.created_at)}`)).toEqual([]);
    expect(await listIds(`from=${encodeURIComponent(entry.created_at)}`)).toEqual(all);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = (
        await get(`/svc/v1/attempts?limit=2${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`)
      ).body;
      paged.push(...(page.data as Json[]).map((attempt) => attempt.id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all);
  });

  it("answers another Project's attempt as unknown, and needs governance:read", async () => {
    const foreign = await get(`/svc/v1/attempts/${calls.otherProject!.attemptId}`);
    expectSvcError(foreign, 404, 'attempt_not_found');
    const unknown = await get('/svc/v1/attempts/att_nothing');
    expectSvcError(unknown, 404, 'attempt_not_found');
    expect(foreign.body.error.message.replace(calls.otherProject!.attemptId, 'X')).toBe(
      unknown.body.error.message.replace('att_nothing', 'X'),
    );
    const own = await get(`/svc/v1/attempts/${calls.otherProject!.attemptId}`, otherKey);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ endpoint: '/v1/chat/completions', tags: { team: 'other' } });
    expect(own.body.upstream_request_id).toMatch(/^req_/);
    const inferenceOnly = await gateway.key('prj_a', ['inference']);
    expectSvcError(await get('/svc/v1/attempts', inferenceOnly), 403, 'gateway_key_scope_denied');
  });

  it('refuses bad filters with a 400 naming the parameter', async () => {
    for (const [query, named] of [
      ['outcome=bogus', 'outcome'],
      ['http_status=abc', 'http_status'],
      ['http_status=600', 'http_status'],
      ['tag.1bad=x', 'tag.1bad'],
      ['tag.team=has%20space', 'tag.team'],
      ['metadata.team=%01', 'metadata.team'],
      ['colour=red', 'colour'],
      ['after=garbage', 'after'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['from=yesterday', 'from'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['alias=a&alias=b', 'alias'],
    ] as const) {
      const answer = await get(`/svc/v1/attempts?${query}`);
      expectSvcError(answer, 400, 'invalid_request');
      expect(answer.body.error.message, query).toContain(named);
    }
  });

  it('refuses bad Svc-Tags in each endpoint dialect before reserving anything', async () => {
    const before = (await listIds('')).length;
    const tooMany = Array.from({ length: 11 }, (_, index) => `k${index}=v`).join(',');
    for (const header of [
      'team',
      'team=',
      '1team=x',
      'team=a b',
      'team=a,team=b',
      tooMany,
      `team=${'x'.repeat(129)}`,
      `${'a'.repeat(65)}=x`,
      'a=b,,c=d',
      Array.from({ length: 10 }, (_, index) => `k${index}=${'v'.repeat(200)}`).join(','),
    ]) {
      const vendora = await postMessages(gateway.url, key, messageBody(`m:${DIRECT}`), {
        'svc-tags': header,
      });
      expect(vendora.status, header).toBe(400);
      expect(vendora.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(vendora.body.error.message).toContain('svc-tags');
      const vendorb = await call(gateway.url, 'POST', '/v1/chat/completions', {
        key,
        headers: { 'svc-tags': header },
        body: { model: `m:${COMPAT}`, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(vendorb.status, header).toBe(400);
      expect(vendorb.body.error).toMatchObject({ type: 'invalid_request_error', param: 'svc-tags' });
    }
    const embeddings = await call(gateway.url, 'POST', '/v1/embeddings', {
      key,
      headers: { 'svc-tags': 'bad' },
      body: { model: `m:${COMPAT}`, input: 'hi' },
    });
    expect(embeddings.status).toBe(400);
    expect(embeddings.body.error.param).toBe('svc-tags');
    expect((await listIds('')).length).toBe(before);
  });

  it('keeps metadata on Work Units and Runs: returned, filterable, bounded, compared on replay', async () => {
    const governance = new Governance(gateway.url, key);
    const view = await get(`/svc/v1/work-units/${unit.id}`);
    expect(view.body.work_unit?.metadata ?? view.body.metadata).toEqual({ team: 'search', tier: 'gold' });
    expect((await get(`/svc/v1/runs/${run.id}`)).body.metadata).toEqual({ customer: 'acme', tier: 'silver' });
    const units = await get('/svc/v1/work-units?metadata.team=search&metadata.tier=gold');
    expect((units.body.data as Json[]).map((found) => found.id)).toEqual([unit.id]);
    expect((await get('/svc/v1/work-units?metadata.team=nobody')).body.data).toEqual([]);
    const runs = await get('/svc/v1/runs?metadata.customer=acme');
    expect((runs.body.data as Json[]).map((found) => found.id)).toEqual([run.id]);
    expectSvcError(await get('/svc/v1/runs?metadata.=x'), 400, 'invalid_request');
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    for (const [metadata, named] of [
      [seventeen, 'metadata'],
      [{ '1bad': 'x' }, 'metadata.1bad'],
      [{ [`k${'x'.repeat(64)}`]: 'x' }, 'metadata.k'],
      [{ team: 'x'.repeat(257) }, 'metadata.team'],
      [{ team: 'line\nbreak' }, 'metadata.team'],
      [{ team: 5 }, 'metadata.team'],
      [['a'], 'metadata'],
    ] as const) {
      const refused = await governance.post('/svc/v1/work-units', { metadata });
      expectSvcError(refused, 400, 'invalid_request');
      expect(refused.body.error.message).toContain(named);
    }
    const limits = Object.fromEntries(
      Array.from({ length: 16 }, (_, index) => [`k.${index}`, 'v'.repeat(256)]),
    );
    const fits = await governance.post('/svc/v1/work-units', { metadata: { ...limits } });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect(fits.body.metadata).toEqual(limits);
    const idempotencyKey = `replay-${Date.now()}`;
    const first = await call(gateway.url, 'POST', '/svc/v1/work-units', {
      key,
      idempotencyKey,
      body: { metadata: { team: 'a' } },
    });
    expect(first.status).toBe(201);
    const replay = await call(gateway.url, 'POST', '/svc/v1/work-units', {
      key,
      idempotencyKey,
      body: { metadata: { team: 'a' } },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    const changed = await call(gateway.url, 'POST', '/svc/v1/work-units', {
      key,
      idempotencyKey,
      body: { metadata: { team: 'b' } },
    });
    expectSvcError(changed, 409, 'idempotency_conflict');
  });
});
