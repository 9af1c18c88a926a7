/**
 * /v1/batches with the official vendorb SDK (npm `openai`) against a simulator-backed gateway:
 * both carriers (vendora-wire message batches with the requests inline; chat-wire batches with a
 * translated input file) through to completed with an output file whose lines match; line checks
 * naming line number and custom_id; results over the ceiling are undeliverable, never truncated;
 * cancel; idempotency; one ledger attempt per batch reserved at the lines' worst cases and settled
 * from the results; Project isolation.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DeferredWorld, eventually, startDeferredWorld } from '../support/deferred-gateway.js';

let world: DeferredWorld;
let keyA: string;
let keyB: string;
let counter = 0;
const idem = () => `batch-test-${Date.now()}-${++counter}`;
const CEILING = 20_000;

function line(customId: string, text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/messages',
    body: { model: 'batch-model', max_tokens: 100, messages: [{ role: 'user', content: text }], ...extra },
  });
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; message: string; code: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) {
      const body = error.error as { message?: string; code?: unknown } | undefined;
      return { status: error.status ?? 0, message: body?.message ?? '', code: body?.code };
    }
    throw error;
  }
  throw new Error('expected the call to fail');
}

async function upload(client: OpenAI, lines: string[]): Promise<string> {
  const file = await client.files.create(
    { file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' },
    { headers: { 'Idempotency-Key': idem() } },
  );
  return file.id;
}

async function create(client: OpenAI, inputFileId: string, key = idem()) {
  return client.batches.create(
    {
      input_file_id: inputFileId,
      endpoint: '/v1/messages' as never,
      completion_window: '24h',
      metadata: { job: 'nightly' },
    },
    { headers: { 'Idempotency-Key': key } },
  );
}

async function batchAttempt() {
  const audit = await world.gateway.store.listAudit({ limit: 1000 });
  return audit.filter((entry) => entry.endpoint === '/v1/batches').at(-1);
}

beforeAll(async () => {
  world = await startDeferredWorld({ config: { limits: { batch_result_ceiling_bytes: CEILING } } });
  keyA = await world.gateway.key('prj_a', ['inference']);
  keyB = await world.gateway.key('prj_b', ['inference']);
});
afterAll(async () => world?.close());
afterEach(() => world.sim.reset());

describe.each([
  { connection: 'sim-vendora', wire: 'message-batches', upstreamPaths: ['POST /v1/messages/batches'] },
  { connection: 'sim-chat', wire: 'chat-side', upstreamPaths: ['POST /v1/files', 'POST /v1/batches'] },
])('a batch on $connection', ({ connection, wire, upstreamPaths }) => {
  it('runs to completed with an output file whose lines match, settled from the results', async () => {
    const client = world.client(keyA, { 'Svc-Route': connection });
    world.sim.setBehaviour({ batchPolls: 2 }, { wire });
    const input = await upload(client, [
      line('first', 'One'),
      line('second', 'Two two'),
      line('third', 'Three three three'),
    ]);
    world.sim.clearRequests();
    const created = await create(client, input);
    expect(created).toMatchObject({
      object: 'batch',
      endpoint: '/v1/messages',
      input_file_id: input,
      completion_window: '24h',
      status: 'validating',
    });
    expect(created.id).toMatch(/^batch_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.expires_at! - created.created_at).toBe(86_400);
    expect(created.metadata).toEqual({ job: 'nightly' });

    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'completed',
    );
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    expect(done.error_file_id).toBeNull();
    expect(done.completed_at).not.toBeNull();
    const content = await (await client.files.content(done.output_file_id!)).text();
    const lines = content
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    expect(lines.map((item) => item.custom_id).sort()).toEqual(['first', 'second', 'third']);
    for (const item of lines) {
      expect(item.id).toMatch(/^batch_req_/);
      expect(item.error).toBeNull();
      expect(item.response.status_code).toBe(200);
      expect(item.response.body).toMatchObject({ type: 'message', role: 'assistant', model: 'batch-model' });
      expect(item.response.body.content[0].text).toBe('Hello from the simulator.');
    }
    const upstream = world.sim
      .requests()
      .filter((request) => request.method === 'POST' && !request.path.includes('cancel'));
    expect(upstream.map((request) => `${request.method} ${request.path}`)).toEqual(upstreamPaths);

    const entry = await batchAttempt();
    expect(entry).toMatchObject({ state: 'settled', connection });
    const expected = lines.reduce(
      (sum, item) => sum + item.response.body.usage.input_tokens + 2 * item.response.body.usage.output_tokens,
      0,
    );
    expect(entry!.costMicrosUsd).toBe(expected);
    expect(entry!.reservationMicrosUsd).toBeGreaterThanOrEqual(expected);
  });

  it('cancels: cancelling, then cancelled with the unrun requests in the error file', async () => {
    const client = world.client(keyA, { 'Svc-Route': connection });
    world.sim.setBehaviour({ batchPolls: 100_000 }, { wire });
    const created = await create(client, await upload(client, [line('a', 'x'), line('b', 'y')]));
    await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'in_progress',
    );
    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).not.toBeNull();
    const cancelled = await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'cancelled',
    );
    expect(cancelled.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    const errors = (await (await client.files.content(cancelled.error_file_id!)).text())
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    expect(errors.map((item) => item.error.code)).toEqual(['batch_cancelled', 'batch_cancelled']);
    expect(await batchAttempt()).toMatchObject({ state: 'settled', costMicrosUsd: 0 });
    expect(await failure(client.batches.cancel(created.id))).toMatchObject({
      status: 409,
      code: 'resource_conflict',
    });
  });

  it('makes results above the ceiling undeliverable, never truncated, committing the reservation', async () => {
    const client = world.client(keyA, { 'Svc-Route': connection });
    world.sim.setBehaviour({ text: 'word '.repeat(5000) }, { wire });
    const created = await create(
      client,
      await upload(client, [line('big', 'Write a lot', { max_tokens: 4000 })]),
    );
    const failed = await eventually(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'failed',
    );
    expect(failed.output_file_id).toBeNull();
    expect(failed.errors?.data?.[0]).toMatchObject({ code: 'results_undeliverable' });
    const entry = await batchAttempt();
    expect(entry).toMatchObject({ state: 'unknown' });
    expect(entry!.costMicrosUsd).toBe(entry!.reservationMicrosUsd);
  });
});

describe('batch creation rules', () => {
  it('checks every line before creation and names the first uncarriable one', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const input = await upload(client, [
      line('fine', 'ok'),
      line('sampled', 'no', { top_k: 5 }),
      line('later', 'x', { top_k: 5 }),
    ]);
    const refused = await failure(create(client, input));
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/line 2 \(custom_id sampled\)/);
    expect(refused.message).toMatch(/top_k/);
    // The same file is carriable on the vendora-wire connection.
    const vendora = world.client(keyA, { 'Svc-Route': 'sim-vendora' });
    const created = await create(
      vendora,
      await upload(vendora, [line('fine', 'ok'), line('sampled', 'no', { top_k: 5 })]),
    );
    expect(created.status).toBe('validating');

    const bad = await failure(create(vendora, await upload(vendora, [line('one', 'ok'), 'not json'])));
    expect(bad.message).toMatch(/line 2: not valid JSON/);
    const duplicate = await failure(
      create(vendora, await upload(vendora, [line('same', 'a'), line('same', 'b')])),
    );
    expect(duplicate.message).toMatch(/line 2 \(custom_id same\): custom_id: used by an earlier line/);
  });

  it('refuses other endpoints and completion windows, and requires an Idempotency-Key with governance semantics', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-vendora' });
    const input = await upload(client, [line('x', 'y')]);
    const window = await failure(
      client.batches.create(
        { input_file_id: input, endpoint: '/v1/messages' as never, completion_window: '48h' as never },
        { headers: { 'Idempotency-Key': idem() } },
      ),
    );
    expect(window.status).toBe(400);
    const endpoint = await failure(
      client.batches.create(
        { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' },
        { headers: { 'Idempotency-Key': idem() } },
      ),
    );
    expect(endpoint.status).toBe(400);
    const key = idem();
    const first = await create(client, input, key);
    const replay = await create(client, input, key);
    expect(replay).toEqual(first);
    const other = await failure(
      client.batches.create(
        { input_file_id: input, endpoint: '/v1/messages' as never, completion_window: '24h' },
        { headers: { 'Idempotency-Key': key } },
      ),
    );
    expect(other).toMatchObject({ status: 409, code: 'idempotency_conflict' });
  });

  it("answers another Project's batches and files exactly like unknown ones", async () => {
    const owner = world.client(keyA, { 'Svc-Route': 'sim-vendora' });
    const stranger = world.client(keyB, { 'Svc-Route': 'sim-vendora' });
    const input = await upload(owner, [line('x', 'y')]);
    const batch = await create(owner, input);
    for (const operation of [
      (id: string) => stranger.batches.retrieve(id),
      (id: string) => stranger.batches.cancel(id),
    ]) {
      const theirs = await failure(operation(batch.id));
      const missing = await failure(operation('batch_00000000000000000000000000'));
      expect(theirs.status).toBe(404);
      expect(theirs.code).toBe(missing.code);
    }
    const foreignFile = await failure(create(stranger, input));
    const missingFile = await failure(create(stranger, 'file_00000000000000000000000000'));
    expect(foreignFile).toMatchObject({ status: 404, code: 'resource_not_found' });
    expect(foreignFile.code).toBe(missingFile.code);
  });
});
