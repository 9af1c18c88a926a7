/**
 * /v1/chat/completions is observed exactly as /v1/messages: one request log line naming the caller,
 * the attempts and what was committed (equal to the audit entries), the metric series labelled with
 * its endpoint and the `chat` operation, a fallback counted, and the vendorb rate-limit headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsListener } from '../../src/http/metrics-routes.js';
import { createObservability } from '../../src/observability/observability.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { rateLimitedConfig } from '../governance/rate-limit-support.js';
import { type CallResult, call, startTestGateway, type TestGateway } from '../support/gateway.js';

let sim: Simulator;
let gateway: TestGateway;
let key: string;
const observability = createObservability({ metrics: true, tracing: false });
let answer: CallResult;

beforeAll(async () => {
  sim = await startSimulator();
  gateway = await startTestGateway({
    observability,
    environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
    config: rateLimitedConfig(sim.url, { requests_per_minute: 50 }),
  });
  key = await gateway.key('prj_b');
  sim.setBehaviour({ status: 503 }, { model: 'up-first' });
  sim.setBehaviour(
    { text: 'Served.', usage: { input_tokens: 11, output_tokens: 5 } },
    { model: 'up-second' },
  );
  answer = await call(gateway.url, 'POST', '/v1/chat/completions', {
    key,
    body: { model: 'fallback', messages: [{ role: 'user', content: 'Hi' }] },
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
});
afterAll(async () => {
  await gateway?.close();
  await sim?.close();
});

describe('observability of /v1/chat/completions', () => {
  it('writes one request line with both attempts and the committed cost of the audit', async () => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('Served.');
    const audit = await gateway.store.listAudit({ limit: 100 });
    expect(audit.map((entry) => [entry.endpoint, entry.connection, entry.httpStatus])).toEqual([
      ['/v1/chat/completions', 'sim-vendora', 503],
      ['/v1/chat/completions', 'sim-chat', 200],
    ]);
    const requestId = answer.headers.get('request-id');
    const line = gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === 'request completed' && entry.request_id === requestId);
    expect(line).toMatchObject({
      project: 'prj_b',
      alias: 'fallback',
      attempt: answer.headers.get('svc-attempt-id'),
      attempts: 2,
      cost_micros_usd: audit[0]!.costMicrosUsd + audit[1]!.costMicrosUsd,
    });
  });

  it('labels the metric series with the endpoint and the chat operation, and counts the fallback', async () => {
    // The key's view holds its Project's series; the listener holds the whole process's.
    const metrics = await call(gateway.url, 'GET', '/metrics', { key });
    const projectText = String(metrics.body);
    const listener = await startMetricsListener(observability.metrics!, { host: '127.0.0.1', port: 0 });
    const text = await fetch(`${listener.url}/metrics`).then((response) => response.text());
    await listener.close();
    for (const connection of ['sim-vendora', 'sim-chat']) {
      expect(projectText).toContain(
        `svc_reservations_admitted_total{project="prj_b",alias="fallback",connection="${connection}",endpoint="/v1/chat/completions"} 1`,
      );
    }
    expect(text).toContain(
      'svc_http_requests_total{route="/v1/chat/completions",method="POST",status_class="2xx"} 1',
    );
    expect(text).toMatch(/gen_ai_operation_name="chat"/);
    expect(text).toContain(
      'svc_fallbacks_total{alias="fallback",from_connection="sim-vendora",to_connection="sim-chat",error_type="http_5xx"} 1',
    );
  });

  it('answers with the vendorb rate-limit headers', () => {
    expect(answer.headers.get('x-ratelimit-limit-requests')).toBe('50');
    expect(answer.headers.get('x-ratelimit-remaining-requests')).toBe('49');
  });
});
