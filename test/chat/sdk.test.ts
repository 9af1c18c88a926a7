/**
 * POST /v1/chat/completions with the official vendorb SDK (`openai`), configured as a user would:
 * base URL and the Gateway Key, nothing else. Against a chat-wire target (the client's body passed
 * through with only the model replaced), a messages-wire target (translated both ways), and
 * aliases that fall back between the two. Plain, streamed with and without include_usage, tools
 * both ways, json_schema, the per-alias default bound, refusals before any upstream I/O, a Run's
 * budget, a key cap, a rate limit; ledger figures checked against what the simulator reported.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/store/port.js';
import { Api } from '../governance/support.js';
import { Governance, type Json, PRICE, priced } from '../messages/support.js';
import { simulatedUpstreamConfig } from '../support/simulated-gateway.js';
import { type SimulatorWorld, startSimulatorWorld } from '../support/simulator-world.js';

const CHAT_CONNECTION = 'compat.chat-embeddings.v1';
const MESSAGES_CONNECTION = 'vendora.messages.2023-06-01';
const RESPONSES = 'vendorb.responses.v1';
const GENERATE_CONTENT = 'vendore.generate-content.text.v1beta';
const MANTLE_RESPONSES = 'cloudf.mantle.responses.v1';
const CHAT = `m:${CHAT_CONNECTION}`;
const MESSAGES = `m:${MESSAGES_CONNECTION}`;
const CHAT_UPSTREAM = `up-${CHAT_CONNECTION}`;
const MESSAGES_UPSTREAM = `up-${MESSAGES_CONNECTION}`;
/** Chat first, messages second. */
const CHAT_FIRST = 'chat-first';
/** Messages first, chat second (the simulated gateway's own `fallback` alias). */
const MESSAGES_FIRST = 'fallback';
/** A chat target whose default bound is small enough to see in the reservation. */
const SMALL_DEFAULT = 'small-default';
const SMALL_DEFAULT_TOKENS = 333;

let world: SimulatorWorld;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  world = await startSimulatorWorld({
    config: (simUrl) => {
      const base = simulatedUpstreamConfig(simUrl);
      return {
        ...base,
        models: [
          ...base.models,
          {
            alias: CHAT_FIRST,
            targets: [
              { connection: CHAT_CONNECTION, model: 'up-cf-chat', price: PRICE },
              { connection: MESSAGES_CONNECTION, model: 'up-cf-messages', price: PRICE },
            ],
          },
          {
            alias: SMALL_DEFAULT,
            default_max_tokens: SMALL_DEFAULT_TOKENS,
            targets: [{ connection: CHAT_CONNECTION, model: 'up-small', price: PRICE }],
          },
          {
            alias: 'small-default-messages',
            default_max_tokens: SMALL_DEFAULT_TOKENS,
            targets: [{ connection: MESSAGES_CONNECTION, model: 'up-small-messages', price: PRICE }],
          },
        ],
      };
    },
  });
  key = await world.gateway.key();
  client = world.client(key);
});
afterAll(async () => {
  await world?.close();
});
beforeEach(() => {
  world.sim.reset();
  world.sim.clearRequests();
});

const ask = (text: string) => [{ role: 'user' as const, content: text }];

function lastBody(model: string): Json {
  const recorded = world.sim.requests({ model });
  expect(recorded.length, `no upstream request for ${model}`).toBeGreaterThan(0);
  return recorded.at(-1)!.body as Json;
}

async function auditOf(attemptId: string | null): Promise<AuditEntry> {
  expect(attemptId).toMatch(/^att_/);
  for (let tries = 0; tries < 100; tries++) {
    const entries = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
    const entry = entries.find((candidate) => candidate.attemptId === attemptId);
    if (entry !== undefined && entry.state !== 'reserved') return entry;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no settled audit entry for ${attemptId}`);
}

/** The worst case the ledger reserves: the body's bytes at the dearest input price, the bound at the output price. */
function reservationFor(body: unknown, maxTokens: number): number {
  const inputBound = Buffer.byteLength(JSON.stringify(body));
  const inputPrice = Math.max(
    PRICE.input_per_mtok_micros,
    PRICE.cache_write_per_mtok_micros,
    PRICE.cache_read_per_mtok_micros,
  );
  return Math.ceil((inputBound * inputPrice + maxTokens * PRICE.output_per_mtok_micros) / 1_000_000);
}

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** What a profile's row lets a request carry (a request it cannot carry is refused before any I/O). */
interface Row {
  wire: string;
  profile: string;
  streams: boolean;
  tools: boolean;
  format: boolean;
}

const ROWS: Row[] = [
  { wire: 'chat', profile: CHAT_CONNECTION, streams: true, tools: true, format: true },
  { wire: 'messages', profile: MESSAGES_CONNECTION, streams: true, tools: true, format: true },
  { wire: 'responses', profile: RESPONSES, streams: false, tools: true, format: true },
  { wire: 'responses', profile: MANTLE_RESPONSES, streams: true, tools: false, format: true },
  { wire: 'generate-content', profile: GENERATE_CONTENT, streams: true, tools: false, format: false },
];

/** A request the only target cannot carry: 400 no_eligible_route naming why, nothing sent upstream. */
async function noRoute(call: Promise<unknown>, reason: string): Promise<void> {
  const error = await call.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('no_eligible_route');
  expect((error as Error).message).toContain(reason);
  expect(world.sim.requests()).toHaveLength(0);
}

describe.each(
  ROWS.map((row) => ({
    ...row,
    model: `m:${row.profile}`,
    upstream: `up-${row.profile}`,
    connection: row.profile,
  })),
)(
  'chat.completions against a $wire-wire target ($profile)',
  ({ wire, model, upstream, connection, ...can }) => {
    it('plain: text, finish_reason, usage as the simulator reported it, priced in the audit', async () => {
      world.sim.setBehaviour(
        { text: 'Bonjour.', usage: { input_tokens: 41, output_tokens: 7 } },
        { model: upstream },
      );
      const params = { model, max_tokens: 100, messages: ask('Say hello') };
      const { data, response } = await client.chat.completions.create(params).withResponse();
      expect(data.object).toBe('chat.completion');
      expect(data.id).toMatch(/^chatcmpl-/);
      expect(data.model).toBe(model);
      expect(data.choices).toHaveLength(1);
      expect(data.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Bonjour.' });
      expect(data.choices[0]!.finish_reason).toBe('stop');
      expect(data.usage).toMatchObject({ prompt_tokens: 41, completion_tokens: 7, total_tokens: 48 });
      expect(response.headers.get('svc-route')).toBe(connection);
      const entry = await auditOf(response.headers.get('svc-attempt-id'));
      expect(entry).toMatchObject({
        endpoint: '/v1/chat/completions',
        alias: model,
        connection,
        outcome: 'completed',
        costMicrosUsd: priced(PRICE, { input: 41, output: 7 }),
        reservationMicrosUsd: reservationFor(params, 100),
      });
      const sent = lastBody(upstream);
      if (wire === 'chat') expect(sent).toEqual({ ...params, model: upstream });
      else if (wire === 'messages')
        expect(sent).toMatchObject({
          model: upstream,
          max_tokens: 100,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
        });
    });

    it('streamed with include_usage: content chunks, finish_reason, then a usage chunk with no choices', async () => {
      world.sim.setBehaviour(
        { text: 'One two three four.', deltas: 4, usage: { input_tokens: 30, output_tokens: 9 } },
        { model: upstream },
      );
      const streamed = {
        model,
        max_completion_tokens: 50,
        messages: ask('Count'),
        stream: true as const,
        stream_options: { include_usage: true },
      };
      if (!can.streams) return noRoute(client.chat.completions.create(streamed), 'no stream primitive');
      const { data: stream, response } = await client.chat.completions
        .create({
          model,
          max_completion_tokens: 50,
          messages: ask('Count'),
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === model)).toBe(
        true,
      );
      expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('One two three four.');
      const finish = chunks
        .flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))
        .filter(Boolean);
      expect(finish).toEqual(['stop']);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 });
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
      const entry = await auditOf(response.headers.get('svc-attempt-id'));
      expect(entry).toMatchObject({
        endpoint: '/v1/chat/completions',
        outcome: 'completed',
        costMicrosUsd: priced(PRICE, { input: 30, output: 9 }),
      });
      if (wire === 'chat') {
        expect(lastBody(upstream)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      }
    });

    it('streamed without include_usage: no usage chunk for the client, the attempt still settles at the usage', async () => {
      world.sim.setBehaviour(
        { text: 'Short.', usage: { input_tokens: 12, output_tokens: 3 } },
        { model: upstream },
      );
      if (!can.streams) {
        const params = { model, max_tokens: 20, messages: ask('Hi'), stream: true as const };
        return noRoute(client.chat.completions.create(params), 'no stream primitive');
      }
      const { data: stream, response } = await client.chat.completions
        .create({ model, max_tokens: 20, messages: ask('Hi'), stream: true })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(true);
      const entry = await auditOf(response.headers.get('svc-attempt-id'));
      expect(entry.costMicrosUsd).toBe(priced(PRICE, { input: 12, output: 3 }));
      if (wire === 'chat') expect(lastBody(upstream).stream_options).toEqual({ include_usage: true });
    });

    it('tools: a tool call out, the tool result back with the same id', async () => {
      world.sim.setBehaviour(
        { toolCalls: [{ id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } }] },
        { model: upstream, times: 1 },
      );
      if (!can.tools) {
        return noRoute(
          client.chat.completions.create({
            model,
            max_tokens: 200,
            tools: [WEATHER_TOOL],
            messages: ask('Weather?'),
          }),
          'tools unsupported',
        );
      }
      const first = await client.chat.completions.create({
        model,
        max_tokens: 200,
        tools: [WEATHER_TOOL],
        tool_choice: 'auto',
        messages: ask('Weather in Paris?'),
      });
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls).toEqual([
        { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ]);
      world.sim.setBehaviour({ text: '18C and sunny in Paris.' }, { model: upstream, times: 1 });
      const second = await client.chat.completions.create({
        model,
        max_tokens: 200,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'system', content: 'Be brief.' },
          ...ask('Weather in Paris?'),
          choice.message,
          { role: 'tool', tool_call_id: 'call_w1', content: '18C, sunny' },
        ],
      });
      expect(second.choices[0]!.message.content).toBe('18C and sunny in Paris.');
      const sent = lastBody(upstream);
      if (wire === 'chat') {
        expect(sent.messages.at(-1)).toEqual({
          role: 'tool',
          tool_call_id: 'call_w1',
          content: '18C, sunny',
        });
        expect(sent.messages.at(-2).tool_calls[0].id).toBe('call_w1');
      } else if (wire === 'messages') {
        expect(sent.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
        expect(sent.messages.at(-2).content).toEqual([
          { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } },
        ]);
        expect(sent.messages.at(-1).content).toEqual([
          { type: 'tool_result', tool_use_id: 'call_w1', content: '18C, sunny' },
        ]);
      }
    });

    it('streamed tool calls assemble in the SDK (finalChatCompletion)', async () => {
      world.sim.setBehaviour(
        {
          text: 'Checking.',
          toolCalls: [
            { id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
            { id: 'call_b', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        { model: upstream, times: 1 },
      );
      if (!can.tools || !can.streams) {
        const params = {
          model,
          max_tokens: 200,
          tools: [WEATHER_TOOL],
          messages: ask('Weather?'),
          stream: true as const,
        };
        return noRoute(
          client.chat.completions.create(params),
          can.tools ? 'no stream primitive' : 'tools unsupported',
        );
      }
      const stream = client.chat.completions.stream({
        model,
        max_tokens: 200,
        tools: [WEATHER_TOOL],
        messages: ask('Paris and Rome?'),
      });
      const final = await stream.finalChatCompletion();
      const message = final.choices[0]!.message;
      expect(message.content).toBe('Checking.');
      expect(
        message.tool_calls?.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments)]),
      ).toEqual([
        ['call_a', 'get_weather', { city: 'Paris' }],
        ['call_b', 'get_weather', { city: 'Rome' }],
      ]);
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    });

    it('response_format json_schema reaches the target and the JSON answer comes back', async () => {
      world.sim.setBehaviour({ text: '{"city":"Paris"}' }, { model: upstream, times: 1 });
      const schema = {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      };
      const params = {
        model,
        max_tokens: 100,
        messages: ask('Which city?'),
        response_format: {
          type: 'json_schema' as const,
          json_schema: { name: 'answer', schema, strict: true },
        },
      };
      if (!can.format)
        return noRoute(client.chat.completions.create(params), 'output_config.format unsupported');
      const completion = await client.chat.completions.create(params);
      expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'Paris' });
      const sent = lastBody(upstream);
      if (wire === 'chat')
        expect(sent.response_format.json_schema).toEqual({ name: 'answer', schema, strict: true });
      else if (wire === 'messages')
        expect(sent.output_config).toEqual({ format: { type: 'json_schema', schema } });
    });

    it('images as data URLs reach the target', async () => {
      const url = 'data:image/png;base64,iVBORw0KGgo=';
      await client.chat.completions.create({
        model,
        max_tokens: 50,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      });
      const sent = lastBody(upstream);
      if (wire === 'chat')
        expect(sent.messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url } });
      else if (wire === 'messages')
        expect(sent.messages[0].content[1]).toEqual({
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
        });
    });
  },
);

describe('the per-alias default output bound', () => {
  it.each([
    ['chat', SMALL_DEFAULT, 'up-small'],
    ['messages', 'small-default-messages', 'up-small-messages'],
  ])(
    'a %s target is asked for the alias default and the reservation is priced at it',
    async (_wire, model, upstream) => {
      const params = { model, messages: ask('No bound given') };
      const { response } = await client.chat.completions.create(params).withResponse();
      expect(lastBody(upstream).max_tokens).toBe(SMALL_DEFAULT_TOKENS);
      const entry = await auditOf(response.headers.get('svc-attempt-id'));
      expect(entry.reservationMicrosUsd).toBe(reservationFor(params, SMALL_DEFAULT_TOKENS));
    },
  );
});

describe('refusals before any upstream I/O, as the SDK typed errors', () => {
  async function refusal(params: Record<string, unknown>, options: OpenAI.RequestOptions = {}, as = client) {
    const error = await as.chat.completions
      .create(params as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming, options)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(world.sim.requests()).toHaveLength(0);
    return error as InstanceType<typeof OpenAI.APIError>;
  }

  it('n other than 1: BadRequestError naming n', async () => {
    const error = await refusal({ model: CHAT, max_tokens: 10, n: 2, messages: ask('x') });
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('n');
    expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'n', code: 'invalid_request' });
  });

  it('an unknown field: BadRequestError naming it', async () => {
    const error = await refusal({ model: CHAT, frobnicate: 1, messages: ask('x') });
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('frobnicate');
  });

  it('a field no target of the alias can carry (seed on a messages-only alias): 400 naming it', async () => {
    const error = await refusal({ model: MESSAGES, seed: 7, messages: ask('x') });
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('seed');
    expect(error.code).toBe('unsupported_field');
  });

  it('an unknown Gateway Key: AuthenticationError', async () => {
    const error = await refusal(
      { model: CHAT, messages: ask('x') },
      {},
      world.client(`gw_${'Z'.repeat(40)}`),
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('an unknown model: NotFoundError', async () => {
    const error = await refusal({ model: 'no-such-alias', messages: ask('x') });
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.param).toBe('model');
  });

  it("a Run's budget that does not fit: PermissionDeniedError with run_budget_exceeded", async () => {
    const run = await new Governance(world.gateway.url, key).run(10);
    const error = await refusal({ model: CHAT, messages: ask('x') }, { headers: { 'x-svc-run-id': run.id } });
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('run_budget_exceeded');
    expect(error.error).toMatchObject({ type: 'permission_error' });
  });

  it("a key's spend cap: PermissionDeniedError with key_budget_exceeded", async () => {
    const admin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['keys:admin']));
    const created = await admin.post('/svc/v1/keys', {
      scopes: ['inference'],
      caps: { lifetime_micros_usd: 5 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const error = await refusal(
      { model: MESSAGES, messages: ask('x') },
      {},
      world.client(created.body.secret),
    );
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('key_budget_exceeded');
  });

  it("a key's model allow-list: PermissionDeniedError naming the model", async () => {
    const admin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['keys:admin']));
    const created = await admin.post('/svc/v1/keys', { scopes: ['inference'], models: [MESSAGES] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const error = await refusal({ model: CHAT, messages: ask('x') }, {}, world.client(created.body.secret));
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('model_not_allowed');
  });

  it('a rate limit: RateLimitError with the x-ratelimit headers', async () => {
    const admin = new Api(world.gateway.url, await world.gateway.key('prj_a', ['keys:admin']));
    const created = await admin.post('/svc/v1/keys', {
      scopes: ['inference'],
      inference_limits: { requests_per_minute: 1 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const limited = world.client(created.body.secret);
    const { response } = await limited.chat.completions
      .create({ model: CHAT, max_tokens: 10, messages: ask('first') })
      .withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    world.sim.clearRequests();
    const error = await refusal({ model: CHAT, max_tokens: 10, messages: ask('second') }, {}, limited);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.headers?.get('x-ratelimit-limit-requests')).toBe('1');
    expect(error.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(error.headers?.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('a Run attached by header', () => {
  it('is charged the priced usage of a chat completion', async () => {
    world.sim.setBehaviour({ usage: { input_tokens: 50, output_tokens: 20 } }, { model: CHAT_UPSTREAM });
    const governance = new Governance(world.gateway.url, key);
    const run = await governance.run(1_000_000);
    await client.chat.completions.create(
      { model: CHAT, max_tokens: 64, messages: ask('x') },
      { headers: { 'x-svc-run-id': run.id } },
    );
    const view = await governance.getRun(run.id);
    expect(view.committed_micros_usd).toBe(priced(PRICE, { input: 50, output: 20 }));
  });
});

describe('routing and fallback between a chat-wire and a messages-wire target', () => {
  it('chat first fails retryably: the messages target serves, both attempts recorded', async () => {
    world.sim.setBehaviour({ status: 503 }, { model: 'up-cf-chat' });
    world.sim.setBehaviour(
      { text: 'From messages.', usage: { input_tokens: 9, output_tokens: 4 } },
      { model: 'up-cf-messages' },
    );
    const { data, response } = await client.chat.completions
      .create({ model: CHAT_FIRST, max_tokens: 30, messages: ask('x') })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('From messages.');
    expect(response.headers.get('svc-route')).toBe(MESSAGES_CONNECTION);
    expect(response.headers.get('svc-route-skipped')).toContain(`${CHAT_CONNECTION}=failed`);
    const served = await auditOf(response.headers.get('svc-attempt-id'));
    expect(served.costMicrosUsd).toBe(priced(PRICE, { input: 9, output: 4 }));
    const entries = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
    const failed = entries.filter(
      (entry) => entry.alias === CHAT_FIRST && entry.connection === CHAT_CONNECTION,
    );
    expect(failed.at(-1)).toMatchObject({
      httpStatus: 503,
      costMicrosUsd: 0,
      endpoint: '/v1/chat/completions',
    });
  });

  it('messages first fails retryably on a stream: the chat target serves it', async () => {
    world.sim.setBehaviour({ status: 529 }, { model: 'up-first' });
    world.sim.setBehaviour({ text: 'From chat.' }, { model: 'up-second' });
    const { data: stream, response } = await client.chat.completions
      .create({ model: MESSAGES_FIRST, max_tokens: 30, messages: ask('x'), stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('From chat.');
    expect(response.headers.get('svc-route')).toBe(CHAT_CONNECTION);
    expect(response.headers.get('svc-route-skipped')).toContain(`${MESSAGES_CONNECTION}=failed`);
  });

  it('a chat-only field routes the messages target away with the reason and the chat target serves', async () => {
    const { response } = await client.chat.completions
      .create({ model: MESSAGES_FIRST, max_tokens: 30, seed: 42, messages: ask('x') })
      .withResponse();
    expect(response.headers.get('svc-route')).toBe(CHAT_CONNECTION);
    expect(response.headers.get('svc-route-skipped')).toContain(`${MESSAGES_CONNECTION}=seed`);
    expect(lastBody('up-second').seed).toBe(42);
    expect(world.sim.requests({ model: 'up-first' })).toHaveLength(0);
  });
});

describe('a stream the upstream drops', () => {
  it.each([CHAT, MESSAGES])(
    'raises an APIError in the SDK iterator after the chunks already sent (%s)',
    async (model) => {
      world.sim.setBehaviour({ text: 'one two three four five six', deltas: 6, dropAfterEvents: 4 });
      const stream = await client.chat.completions.create({
        model,
        max_tokens: 30,
        messages: ask('x'),
        stream: true,
      });
      let text = '';
      const error = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as Error).message).toContain('Stream interrupted');
      expect('one two three four five six'.startsWith(text)).toBe(true);
    },
  );
});

describe('request shapes a stock client sends', () => {
  it('developer role, content-part arrays on every role and max_completion_tokens reach a messages target', async () => {
    await client.chat.completions.create({
      model: MESSAGES,
      max_completion_tokens: 40,
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Checking.' }],
          tool_calls: [
            { id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_x', content: [{ type: 'text', text: 'sunny' }] },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      stop: ['END'],
      temperature: 0.2,
      top_p: 0.9,
    });
    expect(lastBody(MESSAGES_UPSTREAM)).toMatchObject({
      max_tokens: 40,
      system: [{ type: 'text', text: 'Answer in French.' }],
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_x', name: 'get_weather', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_x', content: 'sunny' }] },
      ],
    });
  });

  it('a body that is not JSON: 400 in the vendorb dialect', async () => {
    const response = await fetch(`${world.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
  });
});
