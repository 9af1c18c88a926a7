/**
 * Files and batches with the stock vendorb SDK configured with nothing but a base URL and a Gateway
 * Key (the connections come from endpoints.default_connections): creation works without an
 * Idempotency-Key (no replay protection: each call creates), a key still replays; files.list and
 * batches.list page the Project's objects in the vendor's list shape, the SDK's auto-pagination
 * walks them all, and another Project's objects never appear. Run on both stores.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../governance/support.js';
import { type DeferredWorld, startDeferredWorld } from '../support/deferred-gateway.js';
import { sdkFailure } from '../support/sdk-failure.js';

const LINE = `${JSON.stringify({
  custom_id: 'only',
  method: 'POST',
  url: '/v1/messages',
  body: { model: 'batch-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
})}\n`;

describeEachStore('files and batches with a stock SDK', (store) => {
  let world: DeferredWorld;
  let clientA: OpenAI;
  let clientB: OpenAI;
  const filesA: string[] = [];
  const batchesA: string[] = [];

  beforeAll(async () => {
    world = await startDeferredWorld({
      store,
      // Jobs poll rarely: the batches here are created and listed, not run.
      jobs: { poll_interval_ms: 60_000 },
      config: { endpoints: { default_connections: { files: 'sim-chat', batches: 'sim-vendora' } } },
    });
    const plain = async (project: string) =>
      new OpenAI({
        baseURL: `${world.gateway.url}/v1`,
        apiKey: await world.gateway.key(project, ['inference']),
        maxRetries: 0,
      });
    clientA = await plain('prj_a');
    clientB = await plain('prj_b');
  });
  afterAll(async () => world?.close());

  async function upload(client: OpenAI, text = LINE, headers: Record<string, string> = {}) {
    const file = await client.files.create(
      { file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' },
      { headers },
    );
    if (client === clientA) filesA.push(file.id);
    return file;
  }

  async function batch(client: OpenAI, inputFileId: string, headers: Record<string, string> = {}) {
    const created = await client.batches.create(
      { input_file_id: inputFileId, endpoint: '/v1/messages' as never, completion_window: '24h' },
      { headers },
    );
    if (client === clientA && !batchesA.includes(created.id)) batchesA.push(created.id);
    return created;
  }

  it('creates files and batches without an Idempotency-Key: each call creates anew', async () => {
    const first = await upload(clientA);
    const second = await upload(clientA);
    expect(first).toMatchObject({ object: 'file', purpose: 'batch', status: 'processed' });
    expect(second.id).not.toBe(first.id);
    const one = await batch(clientA, first.id);
    const two = await batch(clientA, first.id);
    expect(one).toMatchObject({ object: 'batch', status: 'validating', input_file_id: first.id });
    expect(two.id).not.toBe(one.id);
  });

  it('replays with an Idempotency-Key as before, and still refuses an illegal one', async () => {
    const file = await upload(clientA, LINE, { 'Idempotency-Key': `f-${store}` });
    const again = await clientA.files.create(
      { file: await toFile(Buffer.from(LINE), 'input.jsonl'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': `f-${store}` } },
    );
    expect(again).toEqual(file);
    const created = await batch(clientA, file.id, { 'Idempotency-Key': `b-${store}` });
    expect(await batch(clientA, file.id, { 'Idempotency-Key': `b-${store}` })).toEqual(created);
    const illegal = await sdkFailure(batch(clientA, file.id, { 'Idempotency-Key': 'has space' }));
    expect(illegal).toMatchObject({ status: 400, error: { code: 'invalid_idempotency_key' } });
  });

  it("lists the Project's files and batches newest first, auto-paginated past the limit", async () => {
    for (let index = 0; index < 4; index++) await batch(clientA, (await upload(clientA)).id);
    const ownB = await upload(clientB);
    const batchB = await batch(clientB, ownB.id);

    const firstPage = await clientA.files.list({ limit: 3 });
    expect(firstPage.data).toHaveLength(3);
    expect(firstPage.has_more).toBe(true);
    const raw = (await clientA.files
      .list({ limit: 3 })
      .asResponse()
      .then((response) => response.json())) as Record<string, unknown>;
    expect(Object.keys(raw).sort()).toEqual(['data', 'first_id', 'has_more', 'last_id', 'object']);
    expect(raw).toMatchObject({ object: 'list', has_more: true, first_id: firstPage.data[0]!.id });
    expect(raw.last_id).toBe(firstPage.data[2]!.id);

    const files: OpenAI.FileObject[] = [];
    for await (const file of clientA.files.list({ limit: 3 })) files.push(file);
    expect(new Set(files.map((file) => file.id))).toEqual(new Set(filesA));
    expect(files).toHaveLength(filesA.length);
    const created = files.map((file) => file.created_at);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(files.map((file) => file.id)).not.toContain(ownB.id);

    const ascending: string[] = [];
    for await (const file of clientA.files.list({ limit: 4, order: 'asc' })) ascending.push(file.id);
    expect(ascending).toEqual(files.map((file) => file.id).reverse());
    expect((await clientA.files.list({ purpose: 'user_data' })).data).toEqual([]);

    const batches: string[] = [];
    for await (const item of clientA.batches.list({ limit: 2 })) batches.push(item.id);
    expect(new Set(batches)).toEqual(new Set(batchesA));
    expect(batches).toHaveLength(batchesA.length);
    expect(batches).not.toContain(batchB.id);

    const listB = await clientB.batches.list();
    expect(listB.data.map((item) => item.id)).toEqual([batchB.id]);
    expect(listB.has_more).toBe(false);
    expect((await clientB.files.list()).data.map((file) => file.id)).toEqual([ownB.id]);
  });

  it('refuses a bad limit and a cursor of another Project in the vendorb dialect', async () => {
    expect(await sdkFailure(clientA.files.list({ limit: 0 }))).toMatchObject({
      status: 400,
      error: { param: 'limit', type: 'invalid_request_error' },
    });
    expect(await sdkFailure(clientA.batches.list({ limit: 101 }))).toMatchObject({
      status: 400,
      error: { param: 'limit' },
    });
    const foreign = (await clientB.files.list()).data[0]!.id;
    expect(await sdkFailure(clientA.files.list({ after: foreign }))).toMatchObject({
      status: 400,
      error: { param: 'after' },
    });
  });
});
