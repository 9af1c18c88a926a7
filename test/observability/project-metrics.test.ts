/**
 * GET /metrics with a Project's key answers that Project's series only: with traffic from two
 * Projects (admitted, settled, refused, rate-limited), each key sees only its own `project` label
 * values and none of the process-wide families, while the metrics listener sees both Projects.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { METRIC_DEFINITIONS } from '../../src/observability/metric-definitions.js';
import { createObservability } from '../../src/observability/observability.js';
import { projectsWith } from '../governance/support.js';
import { Governance, messageBody, postMessages, startGateway } from '../messages/support.js';
import { call } from '../support/gateway.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { type Sample, scrapeListener, strictSamples, total } from './support.js';

const PROJECTS = ['prj_a', 'prj_b'] as const;
const PROJECT_FAMILIES = METRIC_DEFINITIONS.filter((metric) =>
  (metric.labels as readonly string[]).includes('project'),
).map((metric) => metric.name);

const observability = createObservability({ metrics: true, tracing: false });
let gateway: SimulatedGateway;
const keys: Record<string, string> = {};

beforeAll(async () => {
  gateway = await startGateway({
    observability,
    config: {
      projects: projectsWith((project) => {
        if (project.id === 'prj_b') project.inference_limits = { requests_per_minute: 2 };
      }),
    },
  });
  for (const [index, project] of PROJECTS.entries()) {
    const key = await gateway.key(project);
    keys[project] = key;
    const governance = new Governance(gateway.url, key);
    const run = await governance.run(1_000_000);
    // prj_a: 1 call, prj_b: 2 calls and one refused by its rate limit.
    for (let call = 0; call <= index; call++) {
      const answer = await postMessages(gateway.url, key, messageBody('fallback'), {
        'x-svc-run-id': run.id,
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    const poor = await governance.run(1);
    const refused = await postMessages(gateway.url, key, messageBody('fallback'), {
      'x-svc-run-id': poor.id,
    });
    expect(refused.status).toBe(project === 'prj_b' ? 429 : 403);
  }
}, 60_000);

afterAll(async () => gateway?.close());

async function keyView(project: string): Promise<Sample[]> {
  const result = await call(gateway.url, 'GET', '/metrics', { key: keys[project] });
  expect(result.status).toBe(200);
  expect(result.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return strictSamples(result.body as string);
}

it("each Project's key sees only its own Project's series, and every one of them", async () => {
  const whole = await scrapeListener(observability.metrics!);
  for (const project of PROJECTS) {
    const own = await keyView(project);
    expect(new Set(own.map((sample) => sample.labels.project))).toEqual(new Set([project]));
    for (const sample of own) expect(PROJECT_FAMILIES).toContain(sample.name);
    // The same figures as the whole view has for this Project, series for series.
    const mine = whole.filter((sample) => sample.labels.project === project);
    expect(own).toEqual(expect.arrayContaining(mine));
    expect(own).toHaveLength(mine.length);
  }
  expect(total(whole, 'svc_reservations_admitted_total', { project: 'prj_a' })).toBe(1);
  expect(total(whole, 'svc_reservations_admitted_total', { project: 'prj_b' })).toBe(2);
  expect(total(whole, 'svc_rate_limit_refusals_total', { project: 'prj_b' })).toBe(1);
  expect(total(whole, 'svc_reservations_refused_total', { project: 'prj_a' })).toBe(1);
  // Process-wide families are in the operator's view only.
  expect(whole.some((sample) => sample.name === 'svc_http_requests_total')).toBe(true);
});
