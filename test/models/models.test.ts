/**
 * GET /v1/models and /v1/models/{id} with both official SDKs: the vendora SDK (vendora-version
 * sent) reads vendora's paged list, the vendorb SDK vendorb's list; each alias names the endpoints
 * it serves; errors come in the dialect the client speaks.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';

const TOKENS = { input_per_mtok_micros: 1, output_per_mtok_micros: 2 };
const CONNECTIONS = [
  {
    name: 'chat',
    profile: 'vendorb.chat-embeddings.v1',
    base_url: 'http://127.0.0.1:9/v1',
    auth: { scheme: 'none' },
  },
  {
    name: 'direct',
    profile: 'vendora.messages.2023-06-01',
    base_url: 'http://127.0.0.1:9',
    auth: { scheme: 'none' },
  },
  {
    name: 'gemini',
    profile: 'vendore.generate-content.text.v1beta',
    base_url: 'http://127.0.0.1:9',
    auth: { scheme: 'none' },
  },
];
const MODELS = [
  { alias: 'smart', targets: [{ connection: 'direct', model: 'up-smart', price: TOKENS }] },
  { alias: 'team/cheap', targets: [{ connection: 'chat', model: 'up-cheap', price: TOKENS }] },
  {
    alias: 'voice-hd',
    endpoint: 'audio.speech',
    targets: [
      { connection: 'chat', model: 'up-tts-hd', price: { per_million_characters_micros: 30_000_000 } },
    ],
  },
  {
    alias: 'guard',
    endpoint: 'moderations',
    targets: [{ connection: 'chat', model: 'up-mod', price: { per_request_micros: 1 } }],
  },
  // Its only wire has no batch API: /v1/batches is not listed.
  { alias: 'flash', targets: [{ connection: 'gemini', model: 'up-flash', price: TOKENS }] },
];

let gateway: TestGateway;
let key: string;

function vendora(apiKey = key): Anthropic {
  return new Anthropic({
    baseURL: gateway.url,
    apiKey,
    maxRetries: 0,
    defaultHeaders: { 'vendora-version': '2023-06-01' },
  });
}
function vendorb(apiKey = key): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 });
}

beforeAll(async () => {
  gateway = await startTestGateway({ config: { connections: CONNECTIONS, models: MODELS } });
  key = await gateway.key('prj_a', ['inference']);
});
afterAll(async () => gateway?.close());

describe('GET /v1/models', () => {
  it('lists every alias with its endpoints in vendorb shape (vendorb SDK)', async () => {
    const models = [];
    for await (const model of vendorb().models.list()) models.push(model);
    expect(models.map((model) => model.id)).toEqual(['smart', 'team/cheap', 'voice-hd', 'guard', 'flash']);
    expect(models[0]).toMatchObject({ object: 'model', owned_by: 'svc' });
    expect(Number.isInteger(models[0]!.created)).toBe(true);
    expect(models.map((model) => (model as unknown as { endpoints: string[] }).endpoints)).toEqual([
      ['/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/chat/completions', '/v1/batches'],
      ['/v1/messages', '/v1/responses', '/v1/chat/completions', '/v1/batches'],
      ['/v1/audio/speech'],
      ['/v1/moderations'],
      ['/v1/messages', '/v1/responses', '/v1/chat/completions'],
    ]);
  });

  it('lists in vendora shape with cursor pages (vendora SDK)', async () => {
    const client = vendora();
    const all = [];
    for await (const model of client.models.list({ limit: 3 })) all.push(model);
    expect(all.map((model) => model.id)).toEqual(['smart', 'team/cheap', 'voice-hd', 'guard', 'flash']);
    expect(all[0]).toMatchObject({ type: 'model', display_name: 'smart' });
    expect(new Date(all[0]!.created_at).toISOString()).toBe(all[0]!.created_at);
    const first = await client.models.list({ limit: 3 });
    expect(first).toMatchObject({ has_more: true, first_id: 'smart', last_id: 'voice-hd' });
    const before = await client.models.list({ before_id: 'guard', limit: 2 });
    expect(before.data.map((model) => model.id)).toEqual(['team/cheap', 'voice-hd']);
    expect(before.has_more).toBe(true);
  });

  it('retrieves one alias in both dialects, slashes included', async () => {
    expect(await vendora().models.retrieve('team/cheap')).toMatchObject({
      type: 'model',
      id: 'team/cheap',
      endpoints: ['/v1/messages', '/v1/responses', '/v1/chat/completions', '/v1/batches'],
    });
    expect(await vendorb().models.retrieve('voice-hd')).toMatchObject({
      id: 'voice-hd',
      object: 'model',
      endpoints: ['/v1/audio/speech'],
    });
  });

  it('answers errors in the dialect of the client', async () => {
    await expect(vendora().models.retrieve('nope')).rejects.toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error', code: 'model_not_found' } },
    });
    await expect(vendorb().models.retrieve('nope')).rejects.toMatchObject({
      status: 404,
      error: { type: 'not_found_error', code: 'model_not_found', param: 'model' },
    });
    await expect(vendora('gw_unknownunknownunknownunknownunknown').models.list()).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    await expect(vendorb('gw_unknownunknownunknownunknownunknown').models.list()).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    await expect(vendora().models.list({ limit: 0 })).rejects.toMatchObject({
      status: 400,
      error: { error: { type: 'invalid_request_error', code: 'invalid_request' } },
    });
    await expect(vendora().models.list({ after_id: 'nope' })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    );
  });

  it('lists only the aliases a restricted key may use; another one is 403 in both dialects', async () => {
    const admin = await gateway.key('prj_a', ['keys:admin']);
    const created = await call(gateway.url, 'POST', '/svc/v1/keys', {
      key: admin,
      idempotencyKey: `models-${Date.now()}`,
      body: { label: 'limited', scopes: ['inference'], models: ['guard', 'smart'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const limited = (created.body as { secret: string }).secret;
    const listed = [];
    for await (const model of vendorb(limited).models.list()) listed.push(model.id);
    expect(listed).toEqual(['smart', 'guard']);
    const page = await vendora(limited).models.list({ limit: 1 });
    expect(page).toMatchObject({ has_more: true, first_id: 'smart', last_id: 'smart' });
    expect((await vendora(limited).models.retrieve('guard')).id).toBe('guard');
    await expect(vendorb(limited).models.retrieve('voice-hd')).rejects.toMatchObject({
      status: 403,
      error: { code: 'model_not_allowed', param: 'model' },
    });
    await expect(vendora(limited).models.retrieve('team/cheap')).rejects.toBeInstanceOf(
      Anthropic.PermissionDeniedError,
    );
  });

  it('names a media alias sent to /v1/messages, count_tokens or /v1/responses for what it is', async () => {
    const responses = await vendorb()
      .responses.create({ model: 'voice-hd', input: 'hi', max_output_tokens: 8 })
      .catch((error: unknown) => error);
    expect(responses).toMatchObject({ status: 404, error: { code: 'model_not_found', param: 'model' } });
    expect((responses as Error).message).toMatch(/voice-hd is an audio\.speech alias/);
    const messages = await vendora()
      .messages.create({ model: 'guard', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(messages).toBeInstanceOf(Anthropic.NotFoundError);
    expect((messages as Error).message).toMatch(/guard is a moderations alias/);
    const counted = await vendora()
      .messages.countTokens({ model: 'guard', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(counted).toBeInstanceOf(Anthropic.NotFoundError);
    expect((counted as Error).message).toMatch(/guard is a moderations alias/);
  });

  it('needs the inference scope', async () => {
    const governanceOnly = await gateway.key('prj_a', ['governance:read']);
    await expect(vendorb(governanceOnly).models.list()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});
