/**
 * The object store (a real S3 server, s3rver on loopback) goes down and comes back (issue 38 item
 * 5). While it is down, a background response, a file upload, a file's content and a batch create
 * answer 503 object_store_unavailable with Retry-After in the vendorb dialect (never 500), and
 * the ledger keeps nothing: the background response's attempt, reserved before its request object
 * is written, ends not_sent with 0 charged and no attempt stays reserved. Once the server is back
 * the same calls succeed and the background response completes. Background work that meets the
 * outage waits for it (a queued response, a batch to submit: held, not charged), and an answer that
 * cannot be stored is charged at its usage, never at its worst case.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferredConfig, eventually, SEALING_KEY } from '../support/deferred-gateway.js';
import { startTestS3, type TestS3 } from '../support/s3-server.js';
import { type SimulatorWorld, startSimulatorWorld } from '../support/simulator-world.js';
import { sqliteInspector } from './store-inspection.js';

let s3: TestS3;
let world: SimulatorWorld;
let key: string;

/** A gateway on SQLite whose objects are in the test's S3 server; its jobs poll every `pollMs`. */
function startWorld(pollMs: number): Promise<SimulatorWorld> {
  return startSimulatorWorld({
    environment: {
      SVC_TEST_SEALING_KEY: SEALING_KEY,
      OUTAGE_S3_KEY_ID: s3.accessKeyId,
      OUTAGE_S3_SECRET: s3.secretAccessKey,
    },
    config: (simUrl) => ({
      ...deferredConfig(simUrl),
      objects: {
        kind: 's3',
        sealing_key_env: 'SVC_TEST_SEALING_KEY',
        s3: {
          bucket: s3.bucket,
          endpoint: s3.endpoint,
          prefix: 'outage/',
          force_path_style: true,
          access_key_id_env: 'OUTAGE_S3_KEY_ID',
          secret_access_key_env: 'OUTAGE_S3_SECRET',
        },
      },
      jobs: { poll_interval_ms: pollMs, batch_poll_interval_ms: 20, lease_ms: 2000, sweep_interval_ms: 50 },
    }),
  });
}

beforeAll(async () => {
  s3 = await startTestS3();
  world = await startWorld(10);
  key = await world.gateway.key('prj_a', ['inference']);
});
afterAll(async () => {
  await world?.close();
  await s3?.stop();
});

/** The SDK's error for a call expected to fail. */
async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

function expectUnavailable(error: InstanceType<typeof OpenAI.APIError>): void {
  expect(error.status).toBe(503);
  expect(error.code).toBe('object_store_unavailable');
  expect(error.type).toBe('server_error');
  expect(error.message).toMatch(/object store cannot be reached/);
  expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

const line = (id: string) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'batch-model', max_completion_tokens: 20, messages: [{ role: 'user', content: id }] },
  });
let sequence = 0;
const idempotent = () => ({ headers: { 'Idempotency-Key': `outage-${++sequence}` } });
const upload = async (client: OpenAI, name: string) =>
  client.files.create(
    { file: await toFile(Buffer.from(`${line('one')}\n`), name), purpose: 'batch' },
    idempotent(),
  );
const batch = (client: OpenAI, fileId: string) =>
  client.batches.create(
    { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
    idempotent(),
  );
const background = (client: OpenAI) =>
  client.responses
    .create({ model: 'resp-model', input: 'Hello', max_output_tokens: 32, background: true })
    .withResponse();

async function attemptRows(gateway = world.gateway) {
  const path = (gateway.config.store as { sqlite: { path: string } }).sqlite.path;
  return sqliteInspector(path).rows(
    "SELECT id, state, cost, reservation FROM attempts WHERE project_id = 'prj_a' ORDER BY created_at",
  );
}

describe('S3 down, then back', () => {
  it('answers 503 with Retry-After and keeps nothing while S3 is down; works again once it is back', async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-chat' });
    const input = await upload(client, 'before.jsonl');
    expect(await attemptRows()).toEqual([]);

    await s3.down();
    expectUnavailable(await refusal(background(world.client(key))));
    expectUnavailable(await refusal(upload(client, 'during.jsonl')));
    expectUnavailable(await refusal(batch(client, input.id)));
    expectUnavailable(await refusal(client.files.content(input.id)));

    // The ledger: the background response's attempt was reserved before its object, and released.
    expect((await attemptRows()).map((row) => [row.state, Number(row.cost)])).toEqual([['released', 0]]);
    const audit = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 100 });
    expect(audit.map((entry) => [entry.outcome, entry.costMicrosUsd])).toEqual([['not_sent', 0]]);
    expect(world.gateway.logs.join('')).not.toMatch(/unhandled error/);

    await s3.up();
    const created = await background(world.client(key));
    expect(created.data.status).toBe('queued');
    const done = await eventually(
      () => world.client(key).responses.retrieve(created.data.id),
      (response) => response.status === 'completed',
    );
    expect(done.output_text.length).toBeGreaterThan(0);
    expect(await (await client.files.content(input.id)).text()).toBe(`${line('one')}\n`);
    const file = await upload(client, 'after.jsonl');
    const accepted = await batch(client, file.id);
    expect(accepted.status).toBe('validating');
    expect((await attemptRows()).filter((row) => row.state === 'reserved').length).toBeLessThanOrEqual(1);
  }, 60_000);
});

describe('S3 down while a background response runs', () => {
  let slow: SimulatorWorld;
  let slowKey: string;
  beforeAll(async () => {
    // Jobs poll every 3 s: the response created below waits in the queue while S3 goes down.
    slow = await startWorld(3000);
    slowKey = await slow.gateway.key('prj_a', ['inference']);
  });
  afterAll(async () => slow?.close());

  it('a queued response waits for S3 (held, not charged) and then completes at its usage', async () => {
    const created = await slow
      .client(slowKey)
      .responses.create({ model: 'resp-model', input: 'Hello', max_output_tokens: 32, background: true })
      .withResponse();
    await s3.down();
    try {
      // The job ran at least once meanwhile: its request could not be read, so it did not start.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect((await slow.client(slowKey).responses.retrieve(created.data.id)).status).toBe('queued');
      expect((await attemptRows(slow.gateway)).map((row) => row.state)).toEqual(['reserved']);
      expect(slow.gateway.logs.join('')).toMatch(/object store unavailable/);
    } finally {
      await s3.up();
    }
    const done = await eventually(
      () => slow.client(slowKey).responses.retrieve(created.data.id),
      (response) => response.status === 'completed',
      20_000,
    );
    expect(done.output_text.length).toBeGreaterThan(0);
    const [row] = await attemptRows(slow.gateway);
    expect(row!.state).toBe('settled');
    expect(Number(row!.cost)).toBeLessThan(Number(row!.reservation));
  }, 40_000);

  it('a batch whose payload cannot be read waits for S3 (held, not charged) and then completes', async () => {
    const client = slow.client(slowKey, { 'Svc-Route': 'sim-chat' });
    const file = await upload(client, 'queued.jsonl');
    const created = await batch(client, file.id);
    const held = (await attemptRows(slow.gateway)).filter((row) => row.state === 'reserved').length;
    await s3.down();
    try {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect((await client.batches.retrieve(created.id)).status).toBe('validating');
      expect((await attemptRows(slow.gateway)).filter((row) => row.state === 'reserved')).toHaveLength(held);
    } finally {
      await s3.up();
    }
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (value) => value.status === 'completed',
      20_000,
    );
    expect(done.request_counts).toMatchObject({ total: 1, completed: 1 });
  }, 40_000);

  it('an answer S3 cannot keep fails the response, charged at its usage, not its worst case', async () => {
    slow.sim.setBehaviour({ latencyMs: 1500 }, { model: 'sim-slow' });
    const created = await slow
      .client(slowKey)
      .responses.create({ model: 'resp-slow', input: 'Hello', max_output_tokens: 32, background: true })
      .withResponse();
    const attemptId = created.response.headers.get('svc-attempt-id');
    await eventually(
      () => slow.client(slowKey).responses.retrieve(created.data.id),
      (response) => response.status === 'in_progress',
      10_000,
    );
    await s3.down();
    try {
      const failed = await eventually(
        () => slow.client(slowKey).responses.retrieve(created.data.id),
        (response) => response.status === 'failed',
        10_000,
      );
      expect(failed.error?.code).toBe('object_store_unavailable');
    } finally {
      await s3.up();
    }
    const row = (await attemptRows(slow.gateway)).find((attempt) => attempt.id === attemptId)!;
    expect(row.state).toBe('settled');
    expect(Number(row.cost)).toBeGreaterThan(0);
    expect(Number(row.cost)).toBeLessThan(Number(row.reservation));
  }, 40_000);
});
