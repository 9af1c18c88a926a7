/**
 * The official vendora SDK (@anthropic-ai/sdk) against the gateway, configured as a user would:
 * base URL without /v1, the Gateway Key as apiKey, vendora-version as a default header. Messages,
 * streams, a tool-use round trip, count_tokens, and errors surfacing as the SDK's typed errors.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { Governance, PRICE, priced, startGateway } from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';
const DIRECT_UPSTREAM = 'up-vendora.messages.2023-06-01';
const CHAT = 'm:compat.chat-embeddings.v1';
const CHAT_UPSTREAM = 'up-compat.chat-embeddings.v1';

let gateway: SimulatedGateway;
let key: string;
let client: Anthropic;

function sdk(apiKey: string, baseURL = gateway.url): Anthropic {
  return new Anthropic({
    baseURL,
    apiKey,
    maxRetries: 0,
    defaultHeaders: { 'vendora-version': '2023-06-01' },
  });
}

beforeAll(async () => {
  gateway = await startGateway();
  key = await gateway.key();
  client = sdk(key);
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

const PARAMS = {
  model: DIRECT,
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
};

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the vendora SDK against the gateway', () => {
  it('creates a message (non-streaming) through the alias', async () => {
    const message = await client.messages.create(PARAMS);
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe(DIRECT);
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'Hello from the simulator.' }),
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message._request_id).toMatch(/^req_/);
    const [sent] = gateway.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(sent?.body).toMatchObject({ ...PARAMS, model: DIRECT_UPSTREAM });
    expect(JSON.stringify(sent?.headers)).not.toContain(key.slice(3));
  });

  it('a base URL that includes /v1 yields a 404 NotFoundError', async () => {
    const wrong = sdk(key, `${gateway.url}/v1`);
    const error = await wrong.messages.create(PARAMS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect((error as InstanceType<typeof Anthropic.NotFoundError>).status).toBe(404);
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  for (const [label, model, upstream] of [
    ['direct vendora', DIRECT, DIRECT_UPSTREAM],
    ['chat completions (translated)', CHAT, CHAT_UPSTREAM],
  ] as const) {
    it(`streams with messages.stream(...).finalMessage() [${label}]`, async () => {
      gateway.simulator.setBehaviour(
        { text: 'Sunny and mild today.', deltas: 4, usage: { input_tokens: 30, output_tokens: 9 } },
        { model: upstream },
      );
      const texts: string[] = [];
      const stream = client.messages.stream({ ...PARAMS, model }).on('text', (text) => texts.push(text));
      const message = await stream.finalMessage();
      expect(texts.join('')).toBe('Sunny and mild today.');
      expect(texts.length).toBeGreaterThan(1);
      expect(message.model).toBe(model);
      expect(message.content).toEqual([
        expect.objectContaining({ type: 'text', text: 'Sunny and mild today.' }),
      ]);
      expect(message.usage.output_tokens).toBe(9);
      expect(message.stop_reason).toBe('end_turn');
    });

    it(`tool use round trip [${label}]`, async () => {
      gateway.simulator.setBehaviour(
        { toolCalls: [{ id: 'toolu_01weather', name: 'get_weather', input: { city: 'Paris' } }] },
        { model: upstream, times: 1 },
      );
      const first = await client.messages.create({ ...PARAMS, model, tools: [WEATHER_TOOL] });
      expect(first.stop_reason).toBe('tool_use');
      const toolUse = first.content.find((block) => block.type === 'tool_use');
      expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
      const toolUseId = (toolUse as { id: string }).id;
      gateway.simulator.setBehaviour({ text: 'It is 18 degrees in Paris.' }, { model: upstream, times: 1 });
      const second = await client.messages.create({
        ...PARAMS,
        model,
        tools: [WEATHER_TOOL],
        messages: [
          ...PARAMS.messages,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: toolUseId, content: '18 C, clear' }],
          },
        ],
      });
      expect(second.content).toEqual([
        expect.objectContaining({ type: 'text', text: 'It is 18 degrees in Paris.' }),
      ]);
      const sent = gateway.simulator.requests({ model: upstream });
      expect(sent).toHaveLength(2);
      expect(JSON.stringify(sent[1]!.body)).toContain('18 C, clear');
      expect(JSON.stringify(sent[1]!.body)).toContain(toolUseId);
    });
  }

  it('streams a tool call into the SDK accumulator', async () => {
    gateway.simulator.setBehaviour(
      { text: 'Let me check.', toolCalls: [{ name: 'get_weather', input: { city: 'Oslo' } }] },
      { model: DIRECT_UPSTREAM },
    );
    const message = await client.messages.stream({ ...PARAMS, tools: [WEATHER_TOOL] }).finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(message.content[1]).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
  });

  it('counts tokens with messages.countTokens', async () => {
    gateway.simulator.setBehaviour({ usage: { input_tokens: 321 } }, { model: DIRECT_UPSTREAM });
    const counted = await client.messages.countTokens({
      model: DIRECT,
      messages: PARAMS.messages,
      tools: [WEATHER_TOOL],
    });
    expect(counted.input_tokens).toBe(321);
    const [sent] = gateway.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(sent?.path).toBe('/v1/messages/count_tokens');
    expect(sent?.body).toEqual({ model: DIRECT_UPSTREAM, messages: PARAMS.messages, tools: [WEATHER_TOOL] });
  });

  it('attaches a Run through a per-request header and the Run is charged the priced usage', async () => {
    gateway.simulator.setBehaviour(
      { usage: { input_tokens: 50, output_tokens: 20 } },
      { model: DIRECT_UPSTREAM },
    );
    const governance = new Governance(gateway.url, key);
    const run = await governance.run(1_000_000);
    await client.messages.create(PARAMS, { headers: { 'x-svc-run-id': run.id } });
    const view = await governance.getRun(run.id);
    expect(view.committed_micros_usd).toBe(priced(PRICE, { input: 50, output: 20 }));
  });
});

describe('errors surface as the SDK typed errors', () => {
  it('an unknown field: BadRequestError with the svc code and the field named', async () => {
    const error = await client.messages
      .create({ ...PARAMS, frobnicate: true } as unknown as typeof PARAMS)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const apiError = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain('frobnicate');
    expect(apiError.error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', code: 'invalid_request' },
    });
    expect(apiError.requestID).toMatch(/^req_/);
  });

  it('an unknown Gateway Key: AuthenticationError', async () => {
    const error = await sdk(`gw_${'Z'.repeat(40)}`)
      .messages.create(PARAMS)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401);
  });

  it('a budget that does not fit: PermissionDeniedError (run_budget_exceeded)', async () => {
    const governance = new Governance(gateway.url, key);
    const run = await governance.run(10);
    const error = await client.messages
      .create(PARAMS, { headers: { 'x-svc-run-id': run.id } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const apiError = error as InstanceType<typeof Anthropic.PermissionDeniedError>;
    expect(apiError.status).toBe(403);
    expect(apiError.error).toMatchObject({
      error: { type: 'permission_error', code: 'run_budget_exceeded' },
    });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('an unknown model alias: NotFoundError', async () => {
    const error = await client.messages
      .create({ ...PARAMS, model: 'no-such-alias' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('an upstream overload after every target: InternalServerError-class status passes through', async () => {
    gateway.simulator.setBehaviour({ status: 529 }, { model: DIRECT_UPSTREAM });
    const error = await client.messages.create(PARAMS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      error: { type: 'overloaded_error' },
    });
  });

  it('a stream the upstream drops mid-way rejects finalMessage() with an APIError', async () => {
    gateway.simulator.setBehaviour({ dropAfterEvents: 3, deltas: 5 }, { model: DIRECT_UPSTREAM });
    const error = await client.messages
      .stream(PARAMS)
      .finalMessage()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain('api_error');
  });
});
