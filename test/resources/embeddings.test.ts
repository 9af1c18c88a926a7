/**
 * POST /v1/embeddings end to end with the official vendorb SDK (base URL and key only) against a
 * chat-embeddings connection on the simulator: every input shape, float and base64 (the SDK's
 * default, which it decodes itself), `dimensions`; the attempt is reserved at the input bound and
 * settled at the reported usage; a Run's budget, a key cap and a tokens-per-minute limit refuse
 * before any upstream call; bad input and wrong aliases answer in the vendorb dialect; the alias is
 * listed by GET /v1/models.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMBEDDING_SPECIAL_TOKENS_PER_INPUT } from '../../src/money/resource-pricing.js';
import { createObservability } from '../../src/observability/observability.js';
import { simulatedVector } from '../../src/simulator/wires/chat-embeddings.js';
import { Api } from '../governance/support.js';
import { scrapeListener } from '../observability/support.js';
import {
  type ResourceGateway,
  simulatedConnections,
  startResourceGateway,
} from '../support/resource-gateway.js';
import { sdkFailure as failure } from '../support/sdk-failure.js';
import { type SimulatorWorld, startSimulatorWorld } from '../support/simulator-world.js';

const PRICE = { input_per_mtok_micros: 20_000_000, request_fee_micros: 7 }; // 20 micro-USD per token

let world: ResourceGateway;
let key: string;
let client: OpenAI;

const costOf = (tokens: number) => PRICE.request_fee_micros + tokens * 20;

async function lastAudit(projectId = 'prj_a') {
  const entries = await world.gateway.store.listAudit({ projectId, limit: 1000 });
  return entries.at(-1)!;
}

beforeAll(async () => {
  world = await startResourceGateway({
    config: {
      models: [
        {
          alias: 'embed-small',
          endpoint: 'embeddings',
          targets: [{ connection: 'sim-chat', model: 'text-embedding-3-small', price: PRICE }],
        },
        {
          alias: 'embed-free',
          endpoint: 'embeddings',
          targets: [
            { connection: 'sim-chat', model: 'text-embedding-3-large', price: { input_per_mtok_micros: 0 } },
          ],
        },
      ],
    },
  });
  key = await world.gateway.key('prj_a', [
    'inference',
    'run:attach',
    'run:create',
    'work_unit:create',
    'governance:read',
  ]);
  client = world.client(key);
});
afterAll(async () => world?.close());
beforeEach(() => {
  world.sim.clearRequests();
  world.sim.reset();
});

describe('embeddings through the stock SDK', () => {
  it('decodes the default base64 answer to the upstream vector; reserved at the bound, settled at usage', async () => {
    const input = 'Hello, wörld — 東京!';
    const result = await client.embeddings.create({ model: 'embed-small', input });
    expect(result.object).toBe('list');
    expect(result.data).toHaveLength(1);
    const expected = Array.from(simulatedVector('text-embedding-3-small', input, 1536));
    expect(result.data[0]!.embedding).toEqual(expected);
    const tokens = Math.ceil(Buffer.byteLength(input) / 4);
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

    const upstream = world.sim.requests({ wire: 'chat-embeddings' });
    expect(upstream).toHaveLength(1);
    expect(upstream[0]!.path).toBe('/v1/embeddings');
    expect(upstream[0]!.body).toEqual({ model: 'text-embedding-3-small', input, encoding_format: 'base64' });
    const bound = Buffer.byteLength(input) + EMBEDDING_SPECIAL_TOKENS_PER_INPUT;
    expect(await lastAudit()).toMatchObject({
      endpoint: '/v1/embeddings',
      alias: 'embed-small',
      connection: 'sim-chat',
      profile: 'vendorb.chat-embeddings.v1',
      upstreamModel: 'text-embedding-3-small',
      state: 'settled',
      reservationMicrosUsd: costOf(bound),
      costMicrosUsd: costOf(tokens),
      usage: { inputTokens: tokens, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      httpStatus: 200,
    });
  });

  it('passes float and base64 through as asked, and honours dimensions', async () => {
    const floats = await client.embeddings.create({
      model: 'embed-small',
      input: ['first', 'second'],
      encoding_format: 'float',
      dimensions: 8,
    });
    expect(floats.data.map((item) => item.index)).toEqual([0, 1]);
    expect(floats.data[1]!.embedding).toEqual(
      Array.from(simulatedVector('text-embedding-3-small', 'second', 8)),
    );
    const raw = await client.embeddings.create({
      model: 'embed-small',
      input: 'first',
      encoding_format: 'base64',
      dimensions: 8,
    });
    const encoded = raw.data[0]!.embedding as unknown as string;
    expect(typeof encoded).toBe('string');
    const bytes = Buffer.from(encoded, 'base64');
    const decoded = Array.from({ length: 8 }, (_, index) => bytes.readFloatLE(index * 4));
    expect(decoded).toEqual(floats.data[0]!.embedding);
    const norm = Math.sqrt(decoded.reduce((sum, value) => sum + value * value, 0));
    expect(norm).toBeCloseTo(1, 5);
  });

  it('carries token arrays and arrays of token arrays; their bound is their length', async () => {
    const one = await client.embeddings.create({ model: 'embed-small', input: [1, 2, 3, 4, 5] });
    expect(one.data).toHaveLength(1);
    expect(one.usage.prompt_tokens).toBe(5);
    expect(await lastAudit()).toMatchObject({
      reservationMicrosUsd: costOf(5 + EMBEDDING_SPECIAL_TOKENS_PER_INPUT),
      costMicrosUsd: costOf(5),
    });
    const many = await client.embeddings.create({
      model: 'embed-small',
      input: [
        [1, 2],
        [3, 4, 5],
      ],
      user: 'u-1',
    });
    expect(many.data.map((item) => item.embedding.length)).toEqual([1536, 1536]);
    expect(await lastAudit()).toMatchObject({
      reservationMicrosUsd: costOf(5 + 2 * EMBEDDING_SPECIAL_TOKENS_PER_INPUT),
      costMicrosUsd: costOf(5),
    });
    expect(world.sim.requests({ wire: 'chat-embeddings' }).at(-1)!.body).toMatchObject({ user: 'u-1' });
  });

  it('settles at what the upstream reports, even above the reservation (the ledger records truth)', async () => {
    world.sim.setBehaviour({ usage: { input_tokens: 1000 } });
    await client.embeddings.create({ model: 'embed-small', input: 'tiny' });
    expect(await lastAudit()).toMatchObject({
      state: 'settled',
      costMicrosUsd: costOf(1000),
      usage: expect.objectContaining({ inputTokens: 1000 }),
    });
  });

  it('lists embeddings aliases with their endpoint', async () => {
    const listed = await client.models.retrieve('embed-small');
    expect((listed as unknown as { endpoints: string[] }).endpoints).toEqual(['/v1/embeddings']);
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['embed-small', 'embed-free']));
  });
});

describe('refusals in the vendorb dialect, before any upstream call', () => {
  it('names the bad field with param', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'embed-small', input: '' }, 'input'],
      [{ model: 'embed-small', input: [] }, 'input'],
      [{ model: 'embed-small', input: ['ok', 3] }, 'input'],
      [{ model: 'embed-small', input: [[1, 2], []] }, 'input'],
      [{ model: 'embed-small', input: [1.5] }, 'input'],
      [{ model: 'embed-small' }, 'input'],
      [{ model: 'embed-small', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'embed-small', input: 'x', dimensions: 0 }, 'dimensions'],
      [{ model: 'embed-small', input: 'x', truncate: true }, 'truncate'],
    ];
    for (const [body, param] of cases) {
      const refused = await failure(client.post('/embeddings', { body }));
      expect(refused, JSON.stringify(body)).toMatchObject({
        status: 400,
        error: { type: 'invalid_request_error', param },
      });
    }
    expect(world.sim.requests()).toEqual([]);
  });

  it('answers an unknown alias 404 and an alias of another endpoint 400', async () => {
    const unknown = await failure(client.embeddings.create({ model: 'nope', input: 'x' }));
    expect(unknown).toMatchObject({ status: 404, error: { code: 'model_not_found', param: 'model' } });
    const other = await failure(client.embeddings.create({ model: 'tts-1', input: 'x' }));
    expect(other).toMatchObject({ status: 400, error: { param: 'model' } });
    expect(String(other.error.message)).toContain('embed-small');
    expect(world.sim.requests()).toEqual([]);
  });

  it('passes an upstream refusal on in the vendorb dialect and charges nothing', async () => {
    world.sim.setBehaviour({ status: 400, errorMessage: 'This model does not support that.' });
    const refused = await failure(client.embeddings.create({ model: 'embed-small', input: 'x' }));
    expect(refused.status).toBe(400);
    expect(String(refused.error.message)).toContain('does not support');
    expect(await lastAudit()).toMatchObject({ endpoint: '/v1/embeddings', costMicrosUsd: 0 });
  });
});

describe('money and limits through the attempt runner', () => {
  it("charges an attached Run, and refuses when the Run's budget cannot hold the input bound", async () => {
    const api = new Api(world.gateway.url, key);
    const unit = await api.createWorkUnit();
    const run = await api.createRun(unit.id as string, { budget_micros_usd: 1_000 });
    const attached = world.client(key, { 'X-Svc-Run-ID': run.id as string });
    await attached.embeddings.create({ model: 'embed-small', input: 'abcd' }); // 1 token
    expect((await api.get(`/svc/v1/runs/${run.id}`)).body).toMatchObject({
      committed_micros_usd: costOf(1),
      reserved_micros_usd: 0,
    });
    world.sim.clearRequests();
    // 'a' x 100 is bounded at 102 tokens = 2,047 micro-USD > what is left of 1,000.
    const refused = await failure(
      attached.embeddings.create({ model: 'embed-small', input: 'a'.repeat(100) }),
    );
    expect(refused).toMatchObject({ status: 403, error: { code: 'run_budget_exceeded' } });
    expect(world.sim.requests()).toEqual([]);
  });

  it('refuses a key over its lifetime cap before any upstream call', async () => {
    const admin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['keys:admin']));
    const created = await admin.post('/svc/v1/keys', {
      scopes: ['inference'],
      caps: { lifetime_micros_usd: 150 },
    });
    expect(created.status).toBe(201);
    const capped = world.client(created.body.secret as string);
    // 'abcd': bound 6 tokens, reserved 127 micro-USD, settled at 1 token = 27; then 123 remain < 127.
    await capped.embeddings.create({ model: 'embed-small', input: 'abcd' });
    world.sim.clearRequests();
    const refused = await failure(capped.embeddings.create({ model: 'embed-small', input: 'abcd' }));
    expect(refused).toMatchObject({ status: 403, error: { code: 'key_budget_exceeded' } });
    expect(String(refused.error.message)).toContain('150 micro-USD, 123 remaining');
    expect(world.sim.requests()).toEqual([]);
  });

  it("applies the key's inference rate limit, and its model allow-list", async () => {
    const admin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['keys:admin']));
    const limited = await admin.post('/svc/v1/keys', {
      scopes: ['inference'],
      inference_limits: { requests_per_minute: 1 },
    });
    expect(limited.status).toBe(201);
    const once = world.client(limited.body.secret as string);
    const first = await once.embeddings.create({ model: 'embed-small', input: 'abcd' }).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const refused = await failure(once.embeddings.create({ model: 'embed-small', input: 'abcd' }));
    expect(refused).toMatchObject({ status: 429, error: { type: 'rate_limit_error' } });

    const restricted = await admin.post('/svc/v1/keys', { scopes: ['inference'], models: ['embed-free'] });
    expect(restricted.status).toBe(201);
    const only = world.client(restricted.body.secret as string);
    expect((await only.embeddings.create({ model: 'embed-free', input: 'x' })).data).toHaveLength(1);
    const denied = await failure(only.embeddings.create({ model: 'embed-small', input: 'x' }));
    expect(denied).toMatchObject({ status: 403, error: { code: 'model_not_allowed' } });
  });
});

describe('fallback along the alias targets', () => {
  let fallbackWorld: SimulatorWorld;
  let fallbackKey: string;
  const fallbackObservability = createObservability({ metrics: true, tracing: false });

  beforeAll(async () => {
    fallbackWorld = await startSimulatorWorld({
      observability: fallbackObservability,
      environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
      config: (simUrl) => ({
        connections: [
          ...simulatedConnections(simUrl),
          {
            name: 'sim-compat',
            profile: 'compat.chat-embeddings.v1',
            base_url: `${simUrl}/v1`,
            auth: { scheme: 'none' },
          },
        ],
        models: [
          {
            alias: 'embed-any',
            endpoint: 'embeddings',
            targets: [
              { connection: 'sim-chat', model: 'up-first', price: PRICE },
              { connection: 'sim-compat', model: 'up-second', price: { input_per_mtok_micros: 10_000_000 } },
            ],
          },
        ],
      }),
    });
    fallbackKey = await fallbackWorld.gateway.key('prj_a', ['inference', 'governance:read']);
  });
  afterAll(async () => fallbackWorld?.close());

  it('moves on after a retryable failure, names it in svc-route-skipped, and charges each target its own', async () => {
    fallbackWorld.sim.setBehaviour({ status: 503 }, { model: 'up-first', times: 1 });
    const client = fallbackWorld.client(fallbackKey);
    const answered = await client.embeddings.create({ model: 'embed-any', input: 'abcd' }).withResponse();
    expect(answered.data.model).toBe('up-second');
    expect(answered.response.headers.get('svc-route')).toBe('sim-compat');
    expect(answered.response.headers.get('svc-route-skipped')).toMatch(/^sim-chat=failed: /);
    const audit = await fallbackWorld.gateway.store.listAudit({ projectId: 'prj_a', limit: 10 });
    expect(
      audit.map((entry) => [entry.connection, entry.upstreamModel, entry.outcome, entry.costMicrosUsd]),
    ).toEqual([
      ['sim-chat', 'up-first', 'refused_upstream', 0],
      ['sim-compat', 'up-second', 'completed', 10],
    ]);
    // The metrics of both attempts and of the fallback, under the embeddings operation.
    // The whole process's view (the metrics listener): fallbacks and GenAI families carry no Project label.
    const samples = await scrapeListener(fallbackObservability.metrics!);
    const one = (name: string, labels: Record<string, string>) =>
      samples.filter(
        (sample) =>
          sample.name === name &&
          Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
      );
    expect(
      one('svc_fallbacks_total', {
        alias: 'embed-any',
        from_connection: 'sim-chat',
        to_connection: 'sim-compat',
      }).map((sample) => sample.value),
    ).toEqual([1]);
    expect(
      one('svc_cost_micros_usd_total', { alias: 'embed-any', connection: 'sim-compat' }).map(
        (sample) => sample.value,
      ),
    ).toEqual([10]);
    const durations = one('gen_ai_client_operation_duration_seconds_count', {
      gen_ai_operation_name: 'embeddings',
      connection: 'sim-compat',
    });
    expect(durations.map((sample) => sample.value)).toEqual([1]);
  });

  it('does not fall back on a client error, and Svc-Route pins one target', async () => {
    fallbackWorld.sim.setBehaviour({ status: 400, errorMessage: 'bad' }, { model: 'up-first', times: 1 });
    const client = fallbackWorld.client(fallbackKey);
    expect((await failure(client.embeddings.create({ model: 'embed-any', input: 'x' }))).status).toBe(400);
    const pinned = await fallbackWorld
      .client(fallbackKey, { 'Svc-Route': 'sim-compat' })
      .embeddings.create({ model: 'embed-any', input: 'x' });
    expect(pinned.model).toBe('up-second');
    const unknown = await failure(
      fallbackWorld
        .client(fallbackKey, { 'Svc-Route': 'sim-vendora' })
        .embeddings.create({ model: 'embed-any', input: 'x' }),
    );
    expect(unknown).toMatchObject({ status: 400, error: { param: 'svc-route' } });
  });
});
