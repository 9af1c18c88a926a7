/**
 * Inference rate limits (limits/inference-limits.ts) over real HTTP, on SQLite and PostgreSQL:
 * requests and tokens per minute per Gateway Key (keys API) and per Project (configuration), the
 * tokens correction at settlement, refusals in the endpoint's dialect (vendora on /v1/messages,
 * vendorb elsewhere) with Retry-After and the vendors' rate-limit headers, the official SDKs'
 * RateLimitError, and a refused call that reaches no upstream and reserves nothing.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { type CallResult, type StoreKind, startTestGateway, type TestGateway } from '../support/gateway.js';
import { describePostgres } from '../support/postgres.js';
import { messages, moderation, rateLimitedConfig } from './rate-limit-support.js';
import { Api } from './support.js';

function describeStore(kind: StoreKind, name: string) {
  const suite = () => {
    let sim: Simulator;
    let gateway: TestGateway;
    let admin: Api;

    beforeAll(async () => {
      sim = await startSimulator();
      gateway = await startTestGateway({
        store: kind,
        environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
        // prj_b: 4 requests and 30,000 tokens per minute for all its keys together.
        config: rateLimitedConfig(sim.url, { requests_per_minute: 4, tokens_per_minute: 30_000 }),
      });
      admin = new Api(gateway.url, await gateway.key('prj_a', ['keys:admin']));
    });
    afterAll(async () => {
      await gateway?.close();
      await sim?.close();
    });
    beforeEach(() => {
      sim.reset();
      sim.clearRequests();
    });

    async function keyWith(limits: Record<string, number>): Promise<{ id: string; secret: string }> {
      const created = await admin.post('/svc/v1/keys', { scopes: ['inference'], inference_limits: limits });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return { id: created.body.id, secret: created.body.secret };
    }

    it('shows the limits on the key (GET) and validates them (400 naming the field)', async () => {
      const key = await keyWith({ requests_per_minute: 3, tokens_per_minute: 9000 });
      const read = await admin.get(`/svc/v1/keys/${key.id}`);
      expect(read.body.inference_limits).toEqual({ requests_per_minute: 3, tokens_per_minute: 9000 });
      const plain = await admin.post('/svc/v1/keys', { scopes: ['inference'] });
      expect(plain.body.inference_limits).toEqual({});
      const bad = await admin.post('/svc/v1/keys', {
        scopes: ['inference'],
        inference_limits: { requests_per_minute: 0 },
      });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('requests_per_minute');
      const unknown = await admin.post('/svc/v1/keys', {
        scopes: ['inference'],
        inference_limits: { requests_per_hour: 3 },
      });
      expect(unknown.status).toBe(400);
    });

    it("refuses a key's 4th request in a minute (vendora dialect, headers), reaching no upstream", async () => {
      const key = await keyWith({ requests_per_minute: 3 });
      for (let index = 0; index < 3; index++) {
        const ok = await messages(gateway.url, key.secret);
        expect(ok.status, JSON.stringify(ok.body)).toBe(200);
        expect(ok.headers.get('vendora-ratelimit-requests-limit')).toBe('3');
        expect(ok.headers.get('vendora-ratelimit-requests-remaining')).toBe(String(2 - index));
        expect(ok.headers.get('vendora-ratelimit-requests-reset')).toMatch(
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
        );
        expect(ok.headers.get('x-ratelimit-limit-requests')).toBeNull();
      }
      const upstreamBefore = sim.requests().length;
      const refused = await messages(gateway.url, key.secret);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error' },
      });
      expect(refused.body.error.message).toContain("Gateway Key's limit of 3 requests per minute");
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20).toBe(true);
      expect(refused.headers.get('svc-rate-limited')).toBe('key_requests');
      expect(refused.headers.get('vendora-ratelimit-requests-remaining')).toBe('0');
      expect(sim.requests().length).toBe(upstreamBefore);
      const audit = await gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
      expect(audit.filter((entry) => entry.keyId === key.id)).toHaveLength(3);
    });

    it('takes the worst case of tokens at admission and gives back the unused part at settlement', async () => {
      // 5,000 tokens per minute: a call with max_tokens 4000 takes 4000 + its input bound (~100);
      // it uses 10 + 5 tokens, so the next identical call fits only because the difference came back.
      const key = await keyWith({ tokens_per_minute: 5000 });
      sim.setBehaviour({ usage: { input_tokens: 10, output_tokens: 5 } });
      const first = await messages(gateway.url, key.secret, 4000);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(Number(first.headers.get('vendora-ratelimit-tokens-remaining'))).toBeLessThan(1000);
      const second = await messages(gateway.url, key.secret, 4000);
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      // After two corrected calls about 5000 - 2 x 15 tokens are left (plus refill).
      const third = await messages(gateway.url, key.secret, 64);
      expect(third.status).toBe(200);
      expect(Number(third.headers.get('vendora-ratelimit-tokens-remaining'))).toBeGreaterThan(4700);
    });

    it('refuses tokens: a worst case larger than the remaining tokens, and one larger than the limit itself', async () => {
      const key = await keyWith({ tokens_per_minute: 5000 });
      // The upstream reports the whole max_tokens as used: nothing comes back.
      sim.setBehaviour({ usage: { input_tokens: 50, output_tokens: 3000 } });
      expect((await messages(gateway.url, key.secret, 3000)).status).toBe(200);
      const refused = await messages(gateway.url, key.secret, 3000);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('svc-rate-limited')).toBe('key_tokens');
      expect(refused.body.error.message).toContain('5000 tokens per minute');
      const never = await messages(gateway.url, key.secret, 6000);
      expect(never.status).toBe(429);
      expect(never.body.error.message).toContain('can never be admitted');
      expect(never.headers.get('retry-after')).toBe('60');
    });

    it('counts a client request once when portable routing falls back, and sends headers on a stream', async () => {
      const key = await keyWith({ requests_per_minute: 2, tokens_per_minute: 100_000 });
      sim.setBehaviour({ status: 503 }, { model: 'up-first' });
      const fellBack = await messages(gateway.url, key.secret, 64, { model: 'fallback' });
      expect(fellBack.status, JSON.stringify(fellBack.body)).toBe(200);
      expect(fellBack.headers.get('svc-route')).toBe('sim-chat');
      expect(sim.requests().length).toBe(2);
      expect(fellBack.headers.get('vendora-ratelimit-requests-remaining')).toBe('1');
      const streamed = await messages(gateway.url, key.secret, 64, { stream: true });
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('content-type')).toContain('text/event-stream');
      expect(streamed.headers.get('vendora-ratelimit-requests-remaining')).toBe('0');
      expect(streamed.headers.get('vendora-ratelimit-tokens-limit')).toBe('100000');
      const refused = await messages(gateway.url, key.secret, 64, { stream: true });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('svc-rate-limited')).toBe('key_requests');
    });

    it('limits /v1/responses too (vendorb headers, tokens corrected to the usage), read with the vendorb SDK', async () => {
      const key = await keyWith({ tokens_per_minute: 20_000 });
      sim.setBehaviour({ usage: { input_tokens: 7, output_tokens: 3 } });
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key.secret, maxRetries: 0 });
      const request = { model: 'chat', input: 'Hi', max_output_tokens: 8000 };
      const first = await client.responses.create(request).withResponse();
      expect(first.data.status).toBe('completed');
      expect(first.response.headers.get('x-ratelimit-limit-tokens')).toBe('20000');
      expect(Number(first.response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(12_000);
      expect(first.response.headers.get('x-ratelimit-reset-tokens')).toMatch(/s$/);
      expect(first.response.headers.get('vendora-ratelimit-tokens-limit')).toBeNull();
      // Corrected to 10 tokens: two more such calls fit in 20,000 only thanks to the refunds.
      await client.responses.create(request);
      const third = await client.responses.create(request).withResponse();
      expect(Number(third.response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(12_000);
      expect(third.data.status).toBe('completed');
    });

    it('gives the request and its tokens back when the ledger refuses the call (a spend cap)', async () => {
      const created = await admin.post('/svc/v1/keys', {
        scopes: ['inference'],
        caps: { lifetime_micros_usd: 0 },
        inference_limits: { requests_per_minute: 1, tokens_per_minute: 1000 },
      });
      const statuses: number[] = [];
      for (let index = 0; index < 3; index++) {
        const result = await messages(gateway.url, created.body.secret, 500);
        statuses.push(result.status);
        expect(result.body.error.type).toBe('permission_error');
        // Nothing stays taken: the full request and token buckets are reported.
        expect(result.headers.get('vendora-ratelimit-requests-remaining')).toBe('1');
        expect(Number(result.headers.get('vendora-ratelimit-tokens-remaining'))).toBeGreaterThanOrEqual(999);
      }
      expect(statuses).toEqual([403, 403, 403]);
      expect(sim.requests()).toHaveLength(0);
    });

    it('limits a Project across its keys (vendorb dialect on /v1/moderations, x-ratelimit headers, SDK RateLimitError)', async () => {
      const keys = [await gateway.key('prj_b', ['inference']), await gateway.key('prj_b', ['inference'])];
      const statuses: number[] = [];
      let last: CallResult | undefined;
      for (let index = 0; index < 4; index++) {
        last = await moderation(gateway.url, keys[index % 2]!);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 200]);
      expect(last!.headers.get('x-ratelimit-limit-requests')).toBe('4');
      expect(last!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(last!.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?s$|^\d+m[\d.]+s$/);
      expect(last!.headers.get('x-ratelimit-limit-tokens')).toBe('30000');
      const refused = await moderation(gateway.url, keys[0]!);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(refused.body.error.message).toContain("Project's limit of 4 requests per minute (prj_b)");
      expect(refused.headers.get('svc-rate-limited')).toBe('project_requests');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

      const client = new OpenAI({
        baseURL: `${gateway.url}/v1`,
        apiKey: keys[1]!,
        maxRetries: 0,
        defaultHeaders: { 'svc-route': 'sim-chat' },
      });
      const error = await client.moderations
        .create({ model: 'omni-moderation-latest', input: 'fine text' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(
        (error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-ratelimit-remaining-requests'),
      ).toBe('0');
    });

    it("counts a Project's tokens per minute across keys, and the vendora SDK sees RateLimitError", async () => {
      const keys = [await gateway.key('prj_b', ['inference'])];
      // The request bucket of prj_b is empty from the previous test; wait is not needed for tokens:
      // a call worth more than 30,000 tokens can never pass the Project's limit.
      const client = new Anthropic({
        baseURL: gateway.url,
        apiKey: keys[0]!,
        maxRetries: 0,
        defaultHeaders: { 'vendora-version': '2023-06-01' },
      });
      const error = await client.messages
        .create(
          { model: 'chat', max_tokens: 40_000, messages: [{ role: 'user', content: 'Hi' }] },
          { timeout: 10_000 },
        )
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      const limited = error as InstanceType<typeof Anthropic.RateLimitError>;
      expect(limited.status).toBe(429);
      expect(limited.headers?.get('svc-rate-limited')).toBe('project_tokens');
      expect(limited.headers?.get('vendora-ratelimit-tokens-limit')).toBe('30000');
    });
  };
  if (kind === 'postgres') describePostgres(name, suite);
  else describe(name, suite);
}

describeStore('sqlite', 'inference rate limits on SQLite');
describeStore('postgres', 'inference rate limits on PostgreSQL');
