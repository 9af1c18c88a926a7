/**
 * Two gateway processes on one PostgreSQL database and one S3 bucket (s3rver), behind a round-robin
 * proxy written here: governance, model calls attached to one Run, a file upload, a batch and a
 * background response, every request on the next replica in turn; then one replica is killed
 * (SIGKILL) once the batch is submitted, and the other finishes the jobs (the batch completes; the
 * background response completes, or fails as interrupted when the killed one was running its call)
 * and serves everything the killed one stored.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { eventually, SEALING_KEY } from '../support/deferred-gateway.js';
import { call } from '../support/gateway.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { startTestS3, type TestS3 } from '../support/s3-server.js';

const PRICE = { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 2_000_000 };

/** Round-robin over live targets; `served` counts requests per target. */
interface RoundRobin {
  url: string;
  served: number[];
  markDead(index: number): void;
  close(): Promise<void>;
}

async function startRoundRobin(targets: string[]): Promise<RoundRobin> {
  const dead = new Set<number>();
  const served = targets.map(() => 0);
  let next = 0;
  const server: Server = createServer((incoming, outgoing) => {
    let index = next++ % targets.length;
    while (dead.has(index)) index = (index + 1) % targets.length;
    served[index]! += 1;
    const target = new URL(targets[index]!);
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    incoming.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    served,
    markDead: (index) => dead.add(index),
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describePostgres('two replicas on one PostgreSQL database and one S3 bucket', () => {
  const folder = tempFolder('replicas');
  let database: TestDatabase;
  let s3: TestS3;
  let simulator: Simulator;
  let replicas: GatewayProcess[];
  let proxy: RoundRobin;

  beforeAll(async () => {
    [database, s3, simulator] = await Promise.all([
      createTestDatabase(),
      startTestS3(),
      startSimulator({ port: 0 }),
    ]);
    const config = {
      store: { kind: 'postgres', postgres: { url_env: 'SVC_DATABASE_URL', pool_max: 5 } },
      data_dir: folder.path,
      objects: {
        kind: 's3',
        sealing_key_env: 'SVC_SEALING_KEY',
        s3: {
          bucket: s3.bucket,
          endpoint: s3.endpoint,
          prefix: 'replicas/',
          force_path_style: true,
          access_key_id_env: 'SVC_S3_ACCESS_KEY_ID',
          secret_access_key_env: 'SVC_S3_SECRET_ACCESS_KEY',
        },
      },
      projects: reliabilityProjects(),
      connections: [
        {
          name: 'sim-vendora',
          profile: 'vendora.messages.2023-06-01',
          base_url: simulator.url,
          auth: { scheme: 'none' },
        },
        {
          name: 'sim-responses',
          profile: 'vendorb.responses.v1',
          base_url: `${simulator.url}/v1`,
          auth: { scheme: 'none' },
        },
      ],
      models: [
        {
          alias: 'chat-model',
          targets: [{ connection: 'sim-vendora', model: 'sim-messages-1', price: PRICE }],
        },
        {
          alias: 'resp-model',
          targets: [{ connection: 'sim-responses', model: 'sim-resp-1', price: PRICE }],
        },
      ],
      endpoints: {
        default_connections: { files: 'sim-vendora', batches: 'sim-vendora' },
      },
      responses: { default_max_output_tokens: 64 },
      ledger: { lease_seconds: 5, reaper_interval_seconds: 1 },
      jobs: { poll_interval_ms: 50, batch_poll_interval_ms: 200, lease_ms: 1500 },
    };
    const environment = {
      SVC_DATABASE_URL: database.url,
      SVC_SEALING_KEY: SEALING_KEY,
      SVC_S3_ACCESS_KEY_ID: s3.accessKeyId,
      SVC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
    // One at a time: the first applies the migrations.
    const first = await startGatewayProcess({ config, folder: folder.path, environment, name: 'replica-a' });
    const second = await startGatewayProcess({ config, folder: folder.path, environment, name: 'replica-b' });
    replicas = [first, second];
    proxy = await startRoundRobin(replicas.map((replica) => replica.url));
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await stopAllGatewayProcesses();
    await simulator?.close();
    await s3?.stop();
    await database?.drop();
    folder.remove();
  });

  it('serves one system through alternating replicas, and the survivor finishes the killed one’s jobs', async () => {
    const key = replicas[0]!.key;
    const governance = (method: string, path: string, body?: unknown, idempotencyKey?: string) =>
      call(proxy.url, method, path, { key, body, ...(idempotencyKey ? { idempotencyKey } : {}) });

    // Governance: a Work Unit and a Run created through different replicas.
    const unit = await governance('POST', '/svc/v1/work-units', {}, 'wu-replicas');
    expect(unit.status).toBe(201);
    const run = await governance(
      'POST',
      '/svc/v1/runs',
      { work_unit_id: unit.body.id, budget_micros_usd: 1_000_000 },
      'run-replicas',
    );
    expect(run.status).toBe(201);
    const runId = String(run.body.id);
    expect((await governance('GET', `/svc/v1/work-units/${unit.body.id}`)).status).toBe(200);

    // Model calls attached to the Run, alternating replicas: one ledger, one Run total.
    for (let index = 0; index < 4; index++) {
      const answer = await call(proxy.url, 'POST', '/v1/messages', {
        headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'x-svc-run-id': runId },
        body: {
          model: 'chat-model',
          max_tokens: 32,
          messages: [{ role: 'user', content: `hello ${index}` }],
        },
      });
      expect(answer.status).toBe(200);
    }
    const views = [
      await governance('GET', `/svc/v1/runs/${runId}`),
      await governance('GET', `/svc/v1/runs/${runId}`),
    ];
    expect(views[0]!.body.committed_micros_usd).toBeGreaterThan(0);
    expect(views[1]!.body).toEqual(views[0]!.body);
    expect(views[0]!.body.reserved_micros_usd).toBe(0);

    // A file uploaded through one replica is read through both.
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: key, maxRetries: 0 });
    const lines = ['one', 'two'].map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/messages',
        body: { model: 'chat-model', max_tokens: 50, messages: [{ role: 'user', content: `Hi ${id}` }] },
      }),
    );
    const input = Buffer.from(lines.join('\n'));
    const file = await client.files.create(
      { file: await toFile(input, 'in.jsonl'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': 'replicas-file' } },
    );
    for (let index = 0; index < 2; index++)
      expect(Buffer.from(await (await client.files.content(file.id)).arrayBuffer()).equals(input)).toBe(true);

    // A batch from that file (created on the other replica) and a background response.
    simulator.setBehaviour({ batchPolls: 4 }, { wire: 'message-batches' });
    simulator.setBehaviour({ latencyMs: 1500 }, { wire: 'responses' });
    const batch = await client.batches.create(
      { input_file_id: file.id, endpoint: '/v1/messages' as never, completion_window: '24h' },
      { headers: { 'Idempotency-Key': 'replicas-batch' } },
    );
    const background = await client.responses.create({
      model: 'resp-model',
      input: 'in the background',
      background: true,
    });
    expect(['queued', 'in_progress']).toContain(background.status);
    expect(Math.min(...proxy.served)).toBeGreaterThanOrEqual(7);

    // Replica A dies mid-way, once the batch's submission is recorded (its first poll reached the
    // upstream): a replica killed during the submission itself would rightly fail the batch as
    // submission_interrupted, since the upstream may have accepted it.
    await eventually(
      async () =>
        simulator.requests({ wire: 'message-batches' }).filter((request) => request.method === 'GET'),
      (polls) => polls.length >= 1,
      10_000,
    );
    await replicas[0]!.kill('SIGKILL');
    proxy.markDead(0);

    const done = await eventually(
      () => client.batches.retrieve(batch.id),
      (value) => value.status === 'completed',
      30_000,
    );
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n');
    expect(output.map((text) => JSON.parse(text).custom_id).sort()).toEqual(['one', 'two']);
    // The background response ends on the survivor (its upstream answers after 1.5 s, so it was not
    // finished when A died). Either no replica had started it, or B was running it: it completes,
    // called once. Or A had started it: the survivor cannot know whether the upstream billed it, so
    // it fails as interrupted rather than call the upstream a second time.
    const finished = await eventually(
      () => client.responses.retrieve(background.id),
      (value) => value.status === 'completed' || value.status === 'failed',
      30_000,
    );
    const responseCalls = simulator.requests({ wire: 'responses' }).length;
    if (finished.status === 'completed') {
      expect(finished.output_text.length).toBeGreaterThan(0);
      expect(responseCalls).toBe(1);
    } else {
      expect(finished.error?.code).toBe('interrupted');
      expect(responseCalls).toBeLessThanOrEqual(1);
    }
    const submissions = simulator
      .requests({ wire: 'message-batches' })
      .filter((request) => request.method === 'POST');
    expect(submissions).toHaveLength(1);
    expect((await governance('GET', `/svc/v1/runs/${runId}`)).body.committed_micros_usd).toBe(
      views[0]!.body.committed_micros_usd,
    );
    expect(replicas[1]!.alive()).toBe(true);
  }, 120_000);
});
