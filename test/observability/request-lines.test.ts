/**
 * The request's record is handed on explicitly (no AsyncLocalStorage): from the HTTP hooks to the
 * authenticator's Caller, from the Caller to every attempt's plan, and from the plan to the rate
 * limits and the observer. Each /v1 endpoint kind that makes an attempt (messages, count_tokens, a
 * media endpoint, a synchronous response) must therefore still write its one log line with
 * who called, the attempt, its outcome and what it committed (equal to the audit entry), and must
 * still carry the rate-limit headers its admission computed; a refusal names the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObservability } from '../../src/observability/observability.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { messages, moderation, rateLimitedConfig } from '../governance/rate-limit-support.js';
import { type CallResult, call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { messagesHeaders } from '../support/simulated-gateway.js';

describe('request log lines and rate-limit headers without a request scope', () => {
  let sim: Simulator;
  let gateway: TestGateway;
  let key: string;
  const answers: Record<string, CallResult> = {};

  const lineOf = (requestId: string) =>
    gateway.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((line) => line.msg === 'request completed' && line.request_id === requestId);

  beforeAll(async () => {
    sim = await startSimulator();
    gateway = await startTestGateway({
      observability: createObservability({ metrics: true, tracing: false }),
      environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
      // prj_b: 4 requests per minute for all its keys together.
      config: rateLimitedConfig(sim.url, { requests_per_minute: 4 }),
    });
    key = await gateway.key('prj_b');
    answers.messages = await messages(gateway.url, key);
    answers.count = await call(gateway.url, 'POST', '/v1/messages/count_tokens', {
      headers: messagesHeaders(key),
      body: { model: 'chat', messages: [{ role: 'user', content: 'Hi' }] },
    });
    answers.moderation = await moderation(gateway.url, key);
    answers.response = await call(gateway.url, 'POST', '/v1/responses', {
      key,
      headers: { 'svc-route': 'sim-vendora' },
      body: { model: 'chat', input: 'hello', max_output_tokens: 32 },
    });
    answers.refused = await messages(gateway.url, key);
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  it('names the caller, the attempt and what it committed on every endpoint kind', async () => {
    const audit = await gateway.store.listAudit({ limit: 100 });
    const cases = [
      ['messages', '/v1/messages', 'chat'],
      ['count', '/v1/messages/count_tokens', 'chat'],
      ['moderation', '/v1/moderations', 'omni-moderation-latest'],
      ['response', '/v1/responses', 'chat'],
    ] as const;
    expect(audit).toHaveLength(cases.length);
    for (const [name, endpoint, alias] of cases) {
      const answer = answers[name]!;
      expect(answer.status, `${name}: ${JSON.stringify(answer.body)}`).toBe(200);
      const attemptId = answer.headers.get('svc-attempt-id');
      const entry = audit.find((row) => row.attemptId === attemptId);
      expect(entry, name).toMatchObject({ endpoint, alias, projectId: 'prj_b' });
      const line = lineOf(answer.headers.get('request-id') ?? answer.headers.get('x-request-id')!);
      expect(line, name).toMatchObject({
        project: 'prj_b',
        key: entry!.keyId,
        alias,
        attempt: attemptId,
        attempts: 1,
        outcome: entry!.outcome,
        cost_micros_usd: entry!.costMicrosUsd,
      });
    }
  });

  it('answers with the rate-limit state its admission left, in the endpoint dialect', () => {
    expect(answers.messages!.headers.get('vendora-ratelimit-requests-limit')).toBe('4');
    expect(answers.messages!.headers.get('vendora-ratelimit-requests-remaining')).toBe('3');
    expect(answers.count!.headers.get('vendora-ratelimit-requests-remaining')).toBe('2');
    expect(answers.moderation!.headers.get('x-ratelimit-limit-requests')).toBe('4');
    expect(answers.moderation!.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(answers.response!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('refuses the fifth request naming the limit, on the answer and on its line', () => {
    const refused = answers.refused!;
    expect(refused.status).toBe(429);
    expect(refused.headers.get('svc-rate-limited')).toBe('project_requests');
    const line = lineOf(refused.headers.get('request-id')!);
    expect(line).toMatchObject({ project: 'prj_b', status: 429, error: 'rate_limited' });
    expect(line).not.toHaveProperty('attempt');
  });
});
