/**
 * Metric families beyond the attempt series: targets routed away by a fixed reason code (never the
 * free text the client reads in Svc-Route-Skipped), and rate-limit refusals by the limit that
 * refused (the governance bucket; the label set leaves room for inference limits).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_CODES } from '../../src/catalogue/eligibility.js';
import { ManualClock } from '../../src/lib/clock.js';
import { RATE_LIMITS } from '../../src/limits/rate-limit-scope.js';
import { METRIC_DEFINITIONS } from '../../src/observability/metric-definitions.js';
import { createObservability, type Observability } from '../../src/observability/observability.js';
import { Api, expectSvcError, projectsWith } from '../governance/support.js';
import { messageBody, postMessages, startGateway } from '../messages/support.js';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { scrapeListener, total } from './support.js';

const COMPAT = 'compat.chat-embeddings.v1';

const observability = () => createObservability({ metrics: true, tracing: false });
/** The observability of the gateway the current describe block started (scraped on a listener). */
let metrics: Observability;

describe('routed-away targets', () => {
  let gateway: SimulatedGateway;
  let key: string;

  beforeAll(async () => {
    metrics = observability();
    gateway = await startGateway({ observability: metrics });
    key = await gateway.key();
  });
  afterAll(async () => gateway?.close());

  it('are counted by a fixed reason code; the words stay in Svc-Route-Skipped', async () => {
    // top_k: the chat-wire target cannot carry it, so portable routing skips it.
    const answer = await postMessages(gateway.url, key, messageBody('fallback', { top_k: 5 }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.headers.get('svc-route-skipped')).toBe(`${COMPAT}=top_k unsupported`);
    const samples = await scrapeListener(metrics.metrics!);
    expect(
      total(samples, 'svc_routed_away_total', {
        alias: 'fallback',
        connection: COMPAT,
        reason: 'unsupported_field',
      }),
    ).toBe(1);
    expect(total(samples, 'svc_routed_away_total')).toBe(1);
    const reasons = samples
      .filter((sample) => sample.name === 'svc_routed_away_total')
      .map((sample) => sample.labels.reason);
    for (const reason of reasons) expect(SKIP_CODES).toContain(reason);
  });

  it('documents the reason codes in the metric', () => {
    const definition = METRIC_DEFINITIONS.find((metric) => metric.name === 'svc_routed_away_total')!;
    for (const code of SKIP_CODES) expect(definition.help).toContain(code);
  });
});

describe('rate-limit refusals', () => {
  let gateway: TestGateway;
  let clock: ManualClock;

  beforeAll(async () => {
    clock = new ManualClock();
    metrics = observability();
    gateway = await startTestGateway({
      clock,
      observability: metrics,
      config: {
        projects: projectsWith((project) => {
          if (project.id === 'prj_a') project.rate_limit = { requests_per_second: 0.25, burst: 2 };
        }),
      },
    });
  });
  afterAll(async () => gateway?.close());

  it('the governance bucket: counted by Project, surface and limit; its log line names the caller', async () => {
    const api = new Api(gateway.url, await gateway.key('prj_a'));
    for (let index = 0; index < 2; index++)
      expect((await api.post('/svc/v1/work-units', {})).status).toBe(201);
    expectSvcError(await api.post('/svc/v1/work-units', {}), 429, 'governance_rate_limited');
    expectSvcError(
      await api.get('/svc/v1/work-units/wu_00000000000000000000000000'),
      429,
      'governance_rate_limited',
    );
    const samples = await scrapeListener(metrics.metrics!);
    expect(
      total(samples, 'svc_rate_limit_refusals_total', {
        project: 'prj_a',
        surface: 'governance',
        limit: 'governance_requests',
      }),
    ).toBe(2);
    expect(total(samples, 'svc_rate_limit_refusals_total')).toBe(2);
    for (const sample of samples.filter((entry) => entry.name === 'svc_rate_limit_refusals_total')) {
      expect(Object.keys(RATE_LIMITS)).toContain(sample.labels.limit);
      expect(sample.labels.surface).toBe(RATE_LIMITS[sample.labels.limit as keyof typeof RATE_LIMITS]);
    }
    const refusedLines = gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((line) => line.msg === 'request completed' && line.status === 429);
    expect(refusedLines).toHaveLength(2);
    for (const line of refusedLines)
      expect(line).toMatchObject({ project: 'prj_a', error: 'governance_rate_limited' });
    expect(
      refusedLines.every((line) => typeof line.key === 'string' && String(line.key).startsWith('key_')),
    ).toBe(true);
  });
});

describe('inference rate-limit refusals', () => {
  let gateway: SimulatedGateway;

  beforeAll(async () => {
    metrics = observability();
    gateway = await startGateway({
      observability: metrics,
      config: {
        projects: projectsWith((project) => {
          if (project.id === 'prj_a') project.inference_limits = { requests_per_minute: 2 };
        }),
      },
    });
  });
  afterAll(async () => gateway?.close());

  it('are counted by Project, surface inference and the limit that refused', async () => {
    const key = await gateway.key('prj_a');
    const statuses: number[] = [];
    for (let index = 0; index < 4; index++)
      statuses.push((await postMessages(gateway.url, key, messageBody('fallback'))).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    const samples = await scrapeListener(metrics.metrics!);
    expect(
      total(samples, 'svc_rate_limit_refusals_total', {
        project: 'prj_a',
        surface: 'inference',
        limit: 'project_requests',
      }),
    ).toBe(2);
    expect(total(samples, 'svc_rate_limit_refusals_total')).toBe(2);
    expect(total(samples, 'svc_reservations_admitted_total', { project: 'prj_a' })).toBe(2);
  });
});

describe('governance write log lines and request ids', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      observability: createObservability({ metrics: true, tracing: false }),
    });
  });
  afterAll(async () => gateway?.close());

  const completedLine = (requestId: string) =>
    gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((line) => line.msg === 'request completed' && line.request_id === requestId);

  it('a Run created or closed is named as `run` on its line, with Project and key', async () => {
    const api = new Api(gateway.url, await gateway.key('prj_b'));
    const unit = await api.createWorkUnit();
    const created = await call(gateway.url, 'POST', '/svc/v1/runs', {
      key: api.key,
      body: { work_unit_id: unit.id },
      idempotencyKey: `run-${Date.now()}`,
      headers: { 'x-request-id': 'create-run-1' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const closed = await call(gateway.url, 'POST', `/svc/v1/runs/${created.body.id}/close`, {
      key: api.key,
      body: {},
      idempotencyKey: `close-${Date.now()}`,
      headers: { 'x-request-id': 'close-run-1' },
    });
    expect(closed.status, JSON.stringify(closed.body)).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const [requestId, resource] of [
      ['create-run-1', '/svc/v1/runs'],
      ['close-run-1', '/svc/v1/runs/:id/close'],
    ] as const)
      expect(completedLine(requestId)).toMatchObject({
        project: 'prj_b',
        key: expect.stringMatching(/^key_/),
        run: created.body.id,
        resource,
        resource_id: created.body.id,
      });
  });

  it('keeps x-request-id only when well formed (1 to 128 of the allowed characters, one value)', async () => {
    const key = await gateway.key('prj_b');
    const cases: Array<[string, boolean]> = [
      ['a'.repeat(128), true],
      ['a'.repeat(129), false],
      ['550e8400-e29b-41d4-a716-446655440000', true],
      ['01HZX3JQ9Y8K7M6N5P4R3S2T1V:x.y~z_w', true],
      ['has space', false],
      ['semi;colon', false],
      ['quote"d', false],
      ['ünï', false],
    ];
    for (const [value, kept] of cases) {
      const result = await call(gateway.url, 'GET', '/svc/v1/runs/run_00000000000000000000000000', {
        key,
        headers: { 'x-request-id': value },
      });
      const echoed = result.headers.get('request-id');
      if (kept) expect(echoed, value).toBe(value);
      else expect(echoed, value).toMatch(/^req_[0-9A-Z]{24}$/);
    }
    // Two values (a proxy appended one): replaced.
    const twice = await fetch(`${gateway.url}/svc/v1/runs/run_00000000000000000000000000`, {
      headers: [
        ['authorization', `Bearer ${key}`],
        ['x-request-id', 'one'],
        ['x-request-id', 'two'],
      ],
    });
    expect(twice.headers.get('request-id')).toMatch(/^req_/);
  });
});
