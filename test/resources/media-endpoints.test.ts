/**
 * Speech, transcriptions, images and moderations end to end with the official vendorb SDK,
 * against a chat-embeddings connection on the simulator: answers pass through, every call is a
 * ledger attempt at its configured price, unknown fields and images' `user` are refused before
 * any upstream call, and async invocations and rerank answer 501. Svc-Route is read by one parser:
 * a name that is not configured gets the same 400 on files, responses and the media endpoints.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../support/gateway.js';
import { type ResourceGateway, SIM_PRICES, startResourceGateway } from '../support/resource-gateway.js';
import { sdkFailure as failure } from '../support/sdk-failure.js';

let world: ResourceGateway;
let key: string;
let client: OpenAI;

async function lastAudit() {
  const entries = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
  return entries.at(-1)!;
}

beforeAll(async () => {
  world = await startResourceGateway();
  key = await world.gateway.key('prj_a', ['inference', 'run:attach']);
  client = world.client(key, { 'Svc-Route': 'sim-chat' });
});
afterAll(async () => world?.close());
beforeEach(() => {
  world.sim.clearRequests();
  world.sim.reset();
});

describe('audio speech', () => {
  it('streams the upstream audio back with its content type and charges per character', async () => {
    const input = 'Hello, wörld — 東京!';
    const response = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input,
      response_format: 'opus',
    });
    expect(response.headers.get('content-type')).toBe('audio/ogg');
    const audio = Buffer.from(await response.arrayBuffer());
    expect(audio.toString('utf8')).toBe(`SIMAUDIO:opus:${input}`);
    const entry = await lastAudit();
    const characters = [...input].length;
    expect(entry).toMatchObject({
      endpoint: '/v1/audio/speech',
      connection: 'sim-chat',
      profile: 'vendorb.chat-embeddings.v1',
      upstreamModel: 'tts-1',
      state: 'settled',
      reservationMicrosUsd: characters * 15,
      costMicrosUsd: characters * 15,
      httpStatus: 200,
    });
    expect(response.headers.get('svc-attempt-id')).toBe(entry.attemptId);
    const upstream = world.sim.requests({ wire: 'chat-side' });
    expect(upstream.map((request) => request.path)).toEqual(['/v1/audio/speech']);
    expect(upstream[0]!.body).toEqual({ model: 'tts-1', voice: 'alloy', input, response_format: 'opus' });
  });

  it('refuses unknown fields before any upstream call', async () => {
    const refused = await failure(
      client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x', instructions: 'whisper it' }),
    );
    expect(refused).toMatchObject({
      status: 400,
      error: { code: 'invalid_request', param: 'instructions', type: 'invalid_request_error' },
    });
    expect(world.sim.requests()).toEqual([]);
  });
});

describe('audio transcriptions', () => {
  it('passes the upload through and settles by the reported duration', async () => {
    const audio = Buffer.alloc(48_000, 7);
    const result = await client.audio.transcriptions.create({
      file: await toFile(audio, 'clip.wav'),
      model: 'whisper-1',
      language: 'en',
    });
    expect(result.text).toBe('Transcribed 48000 bytes of audio.');
    const entry = await lastAudit();
    expect(entry).toMatchObject({
      endpoint: '/v1/audio/transcriptions',
      state: 'settled',
      reservationMicrosUsd:
        (SIM_PRICES.transcription_max_seconds * SIM_PRICES.transcription_per_minute_micros) / 60,
      costMicrosUsd: (3 * SIM_PRICES.transcription_per_minute_micros) / 60,
    });
    const upstream = world.sim.requests({ wire: 'chat-side' });
    expect(upstream).toHaveLength(1);
    expect(String(upstream[0]!.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    expect(Number(upstream[0]!.body)).toBeGreaterThan(48_000);
  });

  it('returns text formats as text (cost unknown: the reservation is committed)', async () => {
    const text = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(1000), 'clip.mp3'),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(text).toBe('Transcribed 1000 bytes of audio.');
    expect(await lastAudit()).toMatchObject({
      state: 'unknown',
      outcome: 'unknown',
      costMicrosUsd: 10_000 * 6,
    });
  });

  it('refuses unknown fields before any upstream call, wherever they are in the form', async () => {
    const refused = await failure(
      client.audio.transcriptions.create({
        file: await toFile(Buffer.alloc(1000), 'clip.mp3'),
        model: 'whisper-1',
        timestamp_granularities: ['word'],
      }),
    );
    expect(refused).toMatchObject({
      status: 400,
      error: { code: 'invalid_request', param: 'timestamp_granularities[]' },
    });
    expect(world.sim.requests()).toEqual([]);
  });
});

describe('images', () => {
  it('generates n images and charges per image returned', async () => {
    const result = await client.images.generate({
      model: 'gpt-image-1',
      prompt: 'a lighthouse',
      n: 2,
      size: '1024x1024',
    });
    expect(result.data).toHaveLength(2);
    expect(result.data![0]!.b64_json).toMatch(/^iVBOR/);
    expect(typeof result.created).toBe('number');
    expect(await lastAudit()).toMatchObject({
      endpoint: '/v1/images/generations',
      state: 'settled',
      reservationMicrosUsd: 80_000,
      costMicrosUsd: 80_000,
    });
  });

  it('refuses the user field before any upstream call', async () => {
    const refused = await failure(client.images.generate({ prompt: 'a lighthouse', user: 'end-user-42' }));
    expect(refused).toMatchObject({ status: 400, error: { code: 'unsupported_field', param: 'user' } });
    expect(world.sim.requests()).toEqual([]);
  });
});

describe('moderations', () => {
  it('answers one result per input and charges the per-request price', async () => {
    const result = await client.moderations.create({
      model: 'omni-moderation-latest',
      input: ['fine text', 'please flag-me'],
    });
    expect(result.id).toMatch(/^modr-/);
    expect(result.results.map((entry) => entry.flagged)).toEqual([false, true]);
    expect(await lastAudit()).toMatchObject({
      endpoint: '/v1/moderations',
      state: 'settled',
      costMicrosUsd: 100,
    });
  });

  it('maps an upstream error into the vendorb dialect and charges nothing', async () => {
    world.sim.setBehaviour(
      { status: 429, errorMessage: 'slow down', retryAfter: '3' },
      { wire: 'chat-side', times: 1 },
    );
    const limited = await failure(client.moderations.create({ model: 'omni-moderation-latest', input: 'x' }));
    expect(limited.status).toBe(429);
    expect(String(limited.error.message)).toMatch(/slow down/);
    expect(await lastAudit()).toMatchObject({
      state: 'settled',
      costMicrosUsd: 0,
      outcome: 'refused_upstream',
      httpStatus: 429,
    });
  });
});

describe('routing, budgets and not-served endpoints', () => {
  it('needs a media alias of the endpoint, and Svc-Route may only pin one of its connections', async () => {
    const bare = world.client(key);
    expect(await failure(bare.moderations.create({ input: 'x' }))).toMatchObject({
      status: 400,
      error: {
        param: 'model',
        message: expect.stringContaining('aliases serving moderations: omni-moderation-latest'),
      },
    });
    expect(await failure(bare.moderations.create({ model: 'tts-1', input: 'x' }))).toMatchObject({
      status: 400,
      error: {
        param: 'model',
        message: expect.stringContaining('tts-1 serves audio.speech, not moderations'),
      },
    });
    expect(await failure(bare.moderations.create({ model: 'nope', input: 'x' }))).toMatchObject({
      status: 404,
      error: { code: 'model_not_found' },
    });
    const vendora = world.client(key, { 'Svc-Route': 'sim-vendora' });
    expect(
      await failure(vendora.moderations.create({ model: 'omni-moderation-latest', input: 'x' })),
    ).toMatchObject({
      status: 400,
      error: { param: 'svc-route' },
    });
    expect(world.sim.requests()).toEqual([]);
  });

  it('charges the attached Run and refuses a call whose worst case does not fit', async () => {
    const governance = await world.gateway.key('prj_a', ['work_unit:create', 'run:create']);
    const unit = await call(world.gateway.url, 'POST', '/svc/v1/work-units', {
      key: governance,
      body: {},
      idempotencyKey: `wu-${Date.now()}`,
    });
    const run = await call(world.gateway.url, 'POST', '/svc/v1/runs', {
      key: governance,
      body: { work_unit_id: unit.body.id, budget_micros_usd: 50_000 },
      idempotencyKey: `run-${Date.now()}`,
    });
    expect(run.status).toBe(201);
    const attached = world.client(key, { 'Svc-Route': 'sim-chat', 'X-Svc-Run-ID': run.body.id });
    await attached.moderations.create({ model: 'omni-moderation-latest', input: 'x' });
    const refused = await failure(attached.images.generate({ model: 'gpt-image-1', prompt: 'p', n: 2 }));
    expect(refused).toMatchObject({ status: 403, error: { code: 'run_budget_exceeded' } });
    const runView = await call(world.gateway.url, 'GET', `/svc/v1/runs/${run.body.id}`, {
      key: await world.gateway.key('prj_a', ['governance:read']),
    });
    expect(runView.body).toMatchObject({ committed_micros_usd: 100, reserved_micros_usd: 0 });
  });

  it('answers 501 endpoint_not_served naming the withheld profile on every async and rerank route', async () => {
    const routes = [
      ['POST', '/v1/async/invocations', /cloudf\.runtime\.async-invoke\.v1/],
      ['GET', '/v1/async/invocations/inv_123', /cloudf\.runtime\.async-invoke\.v1/],
      ['POST', '/v1/async/invocations/inv_123/cancel', /always fail closed.*no cancel operation/],
      ['POST', '/v1/rerank', /cloudf\.agent-runtime\.rerank\.v1/],
    ] as const;
    for (const [method, path, message] of routes) {
      const answer = await call(world.gateway.url, method, path, {
        key,
        body: method === 'POST' ? { model: 'm' } : undefined,
      });
      expect(answer.status).toBe(501);
      expect(answer.body.error).toMatchObject({
        code: 'endpoint_not_served',
        type: 'server_error',
        param: null,
      });
      expect(answer.body.error.message).toMatch(message);
    }
    expect(world.sim.requests()).toEqual([]);
  });
});

describe('Svc-Route on every resource', () => {
  it('refuses a connection name that is not configured with the same 400, before any upstream call', async () => {
    const nowhere = world.client(key, { 'Svc-Route': 'nowhere' });
    const unknown = {
      status: 400,
      error: {
        type: 'invalid_request_error',
        param: 'svc-route',
        message: 'Svc-Route: no configured connection is named "nowhere".',
      },
    };
    const file = await toFile(Buffer.from('{}\n'), 'input.jsonl');
    expect(await failure(nowhere.files.create({ file, purpose: 'batch' }))).toMatchObject(unknown);
    expect(
      await failure(nowhere.responses.create({ model: 'any', input: 'x', max_output_tokens: 5 })),
    ).toMatchObject(unknown);
    expect(
      await failure(nowhere.moderations.create({ model: 'omni-moderation-latest', input: 'x' })),
    ).toMatchObject({
      status: 400,
      error: {
        param: 'svc-route',
        message:
          'Svc-Route: alias omni-moderation-latest has no target on connection "nowhere" (its connections: sim-chat).',
      },
    });
    expect(world.sim.requests()).toEqual([]);
  });
});
