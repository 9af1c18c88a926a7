/**
 * POST /v1/responses on aliases whose targets speak another wire (issue 15), with the official
 * vendorb SDK: a messages-wire alias and a chat-completions alias, synchronous and streamed; the
 * upstream receives its own wire with the target's model id; each call is one attempt at the
 * target's price; the same routing-away and fallback as /v1/messages; Svc-Route pins a target.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';

const MESSAGES_ALIAS = 'm:vendora.messages.2023-06-01';
const CHAT_ALIAS = 'm:compat.chat-embeddings.v1';

let gateway: SimulatedGateway;
let client: OpenAI;

beforeAll(async () => {
  gateway = await startSimulatedGateway();
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.key(), maxRetries: 0 });
});
afterAll(async () => gateway?.close());
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

async function lastAudit() {
  const entries = await gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
  return entries.at(-1)!;
}

describe('/v1/responses served from other wires', () => {
  it.each([
    [MESSAGES_ALIAS, 'messages', '/v1/messages'],
    [CHAT_ALIAS, 'chat-completions', '/v1/chat/completions'],
  ])('answers a Response object from %s', async (alias, wire, path) => {
    const response = await client.responses.create({
      model: alias,
      instructions: 'Be brief.',
      input: 'What is the weather in Paris?',
      max_output_tokens: 64,
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: alias,
      background: false,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    const sent = gateway.simulator.requests({ wire: wire as 'messages' });
    expect(sent.map((request) => request.path)).toEqual([path]);
    expect((sent[0]!.body as { model: string }).model).toBe(alias.replace('m:', 'up-'));
    const entry = await lastAudit();
    expect(entry).toMatchObject({ endpoint: '/v1/responses', alias, state: 'settled', outcome: 'completed' });
    expect(entry.costMicrosUsd).toBeGreaterThan(0);
    expect(entry.costMicrosUsd).toBeLessThanOrEqual(entry.reservationMicrosUsd);
  });

  it.each([MESSAGES_ALIAS, CHAT_ALIAS])('streams responses-wire events from %s', async (alias) => {
    const stream = client.responses.stream({
      model: alias,
      input: 'Tell me a story.',
      max_output_tokens: 64,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(final).toMatchObject({ status: 'completed', model: alias });
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(await lastAudit()).toMatchObject({ endpoint: '/v1/responses', alias, state: 'settled' });
  });

  it('serves a generate-content alias too, synchronous and streamed', async () => {
    const alias = 'm:vendore.generate-content.text.v1beta';
    const response = await client.responses.create({ model: alias, input: 'hi', max_output_tokens: 32 });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: alias });
    expect(response.output_text.length).toBeGreaterThan(0);
    const stream = client.responses.stream({ model: alias, input: 'hi', max_output_tokens: 32 });
    for await (const _event of stream) {
      // drained
    }
    expect((await stream.finalResponse()).status).toBe('completed');
    const sent = gateway.simulator.requests({ wire: 'generate-content' as 'messages' });
    expect(sent.map((request) => request.path)).toEqual([
      '/v1beta/models/up-vendore.generate-content.text.v1beta:generateContent',
      '/v1beta/models/up-vendore.generate-content.text.v1beta:streamGenerateContent',
    ]);
    expect(await lastAudit()).toMatchObject({ endpoint: '/v1/responses', alias, state: 'settled' });
  });

  it('streams with create({stream: true}) too', async () => {
    const events = await client.responses.create({
      model: MESSAGES_ALIAS,
      input: 'hello',
      max_output_tokens: 32,
      stream: true,
    });
    const seen: number[] = [];
    for await (const event of events) seen.push(event.sequence_number);
    expect(seen).toEqual(seen.map((_, index) => index));
  });

  it('falls back to the next target on a retryable failure, as /v1/messages does', async () => {
    gateway.simulator.setBehaviour(
      { status: 529, errorMessage: 'overloaded' },
      { wire: 'messages', times: 1 },
    );
    const response = await client.responses.create({ model: 'fallback', input: 'hi', max_output_tokens: 16 });
    expect(response.status).toBe('completed');
    const entries = (await gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 })).slice(-2);
    expect(entries.map((entry) => [entry.upstreamModel, entry.outcome])).toEqual([
      ['up-first', 'refused_upstream'],
      ['up-second', 'completed'],
    ]);
  });

  it('lets Svc-Route pin one target of the alias', async () => {
    const pinned = await client.responses.create(
      { model: 'fallback', input: 'hi', max_output_tokens: 16 },
      { headers: { 'Svc-Route': 'compat.chat-embeddings.v1' } },
    );
    expect(pinned.status).toBe('completed');
    expect(gateway.simulator.requests().map((request) => request.path)).toEqual(['/v1/chat/completions']);
    const refused = await client.responses
      .create(
        { model: 'fallback', input: 'hi', max_output_tokens: 16 },
        { headers: { 'Svc-Route': 'vendore.generate-content.text.v1beta' } },
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'svc-route',
    });
  });

  it('refuses what the canonical model cannot carry, naming the field, before any upstream call', async () => {
    const refused = await client.responses
      .create({ model: CHAT_ALIAS, input: 'hi', max_output_tokens: 16, tools: [{ type: 'web_search' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'unsupported_field',
      param: 'tools[0].type',
    });
    expect(gateway.simulator.requests()).toEqual([]);
  });
});
