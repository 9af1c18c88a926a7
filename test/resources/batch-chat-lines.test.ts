/**
 * Batches in the connection's own line format (issue 15), with the official vendorb SDK
 * (`files.create` + `batches.create({endpoint: '/v1/chat/completions'})`): chat-completions lines on
 * a chat connection are forwarded as they came with only the model replaced, their results come
 * back as chat completions (the alias as model), and the ledger reserves the lines' worst case and
 * settles at the target's price times the reported usage. Every line is checked before the batch
 * exists: a bad line is a 400 in the vendorb dialect naming its line number, with nothing reserved
 * and nothing sent upstream; chat lines on a connection without that format are refused.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeferredWorld, eventually, startDeferredWorld } from '../support/deferred-gateway.js';

let world: DeferredWorld;
let key: string;
let counter = 0;
const idem = () => `chat-lines-${Date.now()}-${++counter}`;

function chatLine(customId: string, text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: {
      model: 'batch-model',
      max_completion_tokens: 50,
      messages: [{ role: 'user', content: text }],
      ...extra,
    },
  });
}

async function upload(client: OpenAI, lines: string[]): Promise<string> {
  const file = await client.files.create(
    { file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' },
    { headers: { 'Idempotency-Key': idem() } },
  );
  return file.id;
}

function create(client: OpenAI, inputFileId: string, endpoint = '/v1/chat/completions') {
  return client.batches.create(
    { input_file_id: inputFileId, endpoint: endpoint as '/v1/chat/completions', completion_window: '24h' },
    { headers: { 'Idempotency-Key': idem() } },
  );
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return (error as InstanceType<typeof OpenAI.BadRequestError>).error as {
    message: string;
    param?: string;
    type: string;
  };
}

beforeAll(async () => {
  world = await startDeferredWorld();
  key = await world.gateway.key('prj_a', ['inference']);
});
afterAll(async () => world?.close());

describe('chat-completions lines on a chat connection', () => {
  it('forwards them as they are, answers chat completions, settles at price x usage', async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-chat' });
    const input = await upload(client, [
      chatLine('one', 'One', { temperature: 0.25 }),
      chatLine('two', 'Two two', { n: 2, max_completion_tokens: 20 }),
    ]);
    const created = await create(client, input);
    expect(created).toMatchObject({
      object: 'batch',
      endpoint: '/v1/chat/completions',
      status: 'validating',
    });
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'completed',
    );
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });

    // Upstream: the client's lines, only the model replaced by the target's id.
    const record = (await world.gateway.store.batches.get('prj_a', created.id))!;
    const sent = await fetch(`${world.sim.url}/v1/files/${record.upstreamInputFileId}/content`);
    const upstreamLines = (await sent.text())
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    expect(upstreamLines).toEqual([
      {
        custom_id: 'one',
        method: 'POST',
        url: '/v1/chat/completions',
        body: {
          model: 'sim-chat-1',
          max_completion_tokens: 50,
          messages: [{ role: 'user', content: 'One' }],
          temperature: 0.25,
        },
      },
      {
        custom_id: 'two',
        method: 'POST',
        url: '/v1/chat/completions',
        body: {
          model: 'sim-chat-1',
          max_completion_tokens: 20,
          messages: [{ role: 'user', content: 'Two two' }],
          n: 2,
        },
      },
    ]);

    // Results in the input lines' format: chat completions under the alias.
    const lines = (await (await client.files.content(done.output_file_id!)).text())
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    expect(lines.map((item) => item.custom_id).sort()).toEqual(['one', 'two']);
    for (const item of lines) {
      expect(item.id).toMatch(/^batch_req_/);
      expect(item.error).toBeNull();
      expect(item.response.status_code).toBe(200);
      expect(item.response.body).toMatchObject({ object: 'chat.completion', model: 'batch-model' });
      expect(item.response.body.choices[0].message.content).toBe('Hello from the simulator.');
    }

    // Ledger: one attempt, reserved at the lines' worst case, settled at price (1 in, 2 out) x usage.
    const entry = (await world.gateway.store.listAudit({ limit: 1000 })).find(
      (candidate) => candidate.attemptId === record.attemptId,
    )!;
    const expected = lines.reduce(
      (sum, item) =>
        sum + item.response.body.usage.prompt_tokens + 2 * item.response.body.usage.completion_tokens,
      0,
    );
    expect(entry).toMatchObject({ state: 'settled', endpoint: '/v1/batches', connection: 'sim-chat' });
    expect(expected).toBeGreaterThan(0);
    expect(entry.costMicrosUsd).toBe(expected);
    // The worst case: (50 + 2 x 20) output tokens at 2 each, plus the input bound.
    expect(entry.reservationMicrosUsd).toBeGreaterThanOrEqual(2 * (50 + 2 * 20));
    expect(entry.reservationMicrosUsd).toBeGreaterThanOrEqual(expected);
  });

  it("bounds a line that gives no max tokens at its alias's default, in the line sent upstream", async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-chat' });
    const input = await upload(client, [chatLine('free', 'No bound', { max_completion_tokens: undefined })]);
    const created = await create(client, input);
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'completed',
    );
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const record = (await world.gateway.store.batches.get('prj_a', created.id))!;
    const sent = await fetch(`${world.sim.url}/v1/files/${record.upstreamInputFileId}/content`);
    const [line] = (await sent.text())
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    // The alias's default_max_tokens (4096 unless configured), under the profile's token field.
    expect(line.body).toMatchObject({ model: 'sim-chat-1', max_completion_tokens: 4096 });
    const entry = (await world.gateway.store.listAudit({ limit: 1000 })).find(
      (candidate) => candidate.attemptId === record.attemptId,
    )!;
    // Reserved at that bound: 4096 output tokens at 2 micro-USD each, plus the input bound.
    expect(entry.reservationMicrosUsd).toBeGreaterThanOrEqual(2 * 4096);
  });

  it('checks every line before the batch exists, naming the line: nothing reserved, nothing sent', async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-chat' });
    const cases: Array<[string[], RegExp]> = [
      [
        [chatLine('fine', 'ok'), chatLine('unbounded', 'x', { max_completion_tokens: 0 })],
        /line 2 \(custom_id unbounded\): body\.max_completion_tokens: a positive integer is required/,
      ],
      [
        [chatLine('fine', 'ok'), chatLine('streamed', 'x', { stream: true })],
        /line 2 \(custom_id streamed\): body\.stream/,
      ],
      [
        [chatLine('a', 'ok'), chatLine('b', 'ok'), chatLine('stranger', 'x', { model: 'resp-model' })],
        /line 3 \(custom_id stranger\): model: resp-model has no target on connection sim-chat/,
      ],
      [
        [
          chatLine('a', 'ok'),
          JSON.stringify({
            custom_id: 'messages',
            method: 'POST',
            url: '/v1/messages',
            body: { model: 'batch-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
          }),
        ],
        /line 2 \(custom_id messages\): url: must be \/v1\/chat\/completions/,
      ],
    ];
    for (const [lines, message] of cases) {
      const input = await upload(client, lines);
      world.sim.clearRequests();
      const audit = (await world.gateway.store.listAudit({ limit: 1000 })).length;
      const error = await refusal(create(client, input));
      expect(error.message).toMatch(message);
      expect(error).toMatchObject({ type: 'invalid_request_error', param: 'input_file_id' });
      expect(world.sim.requests()).toEqual([]);
      expect((await world.gateway.store.listAudit({ limit: 1000 })).length).toBe(audit);
    }
  });

  it('refuses chat lines on a connection whose batch format is messages', async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-vendora' });
    const input = await upload(client, [chatLine('one', 'One')]);
    const error = await refusal(create(client, input));
    expect(error).toMatchObject({ param: 'endpoint' });
    expect(error.message).toMatch(/connection sim-vendora .* takes \/v1\/messages lines/);
  });
});
