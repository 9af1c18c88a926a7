/**
 * Background POST /v1/responses on aliases whose targets speak another wire (issue 15), with the
 * official vendorb SDK: `responses.create({background: true})` then `responses.retrieve` polling, on
 * a messages-wire alias, a chat-completions alias and a generate-content alias. The job translates through the canonical
 * model, the upstream receives its own wire with the target's model id, the stored answer is a
 * responses-wire Response, and the ledger settles at that target's price times the usage. Also: the
 * /v1/messages fallback (a new attempt on the next target), Svc-Route pinning, cancel while running,
 * refusals before any upstream call, and (PostgreSQL) a response created on one replica and run by
 * another after the first stopped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import type { AuditEntry } from '../../src/store/port.js';
import { deferredConfig, eventually, SEALING_KEY } from '../support/deferred-gateway.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, describePostgres } from '../support/postgres.js';
import { type SimulatorWorld, startSimulatorWorld } from '../support/simulator-world.js';

/** micro-USD per token: messages target 3 in / 15 out, chat target 2 in / 8 out. */
const MESSAGES_PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };
const CHAT_PRICE = { input_per_mtok_micros: 2_000_000, output_per_mtok_micros: 8_000_000 };
const GEMINI_PRICE = { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 4_000_000 };

const MODELS = [
  {
    alias: 'bg-messages',
    targets: [{ connection: 'sim-vendora', model: 'up-msg-1', price: MESSAGES_PRICE }],
  },
  { alias: 'bg-chat', targets: [{ connection: 'sim-chat', model: 'up-chat-1', price: CHAT_PRICE }] },
  {
    alias: 'bg-fallback',
    targets: [
      { connection: 'sim-vendora', model: 'up-fb-msg', price: MESSAGES_PRICE },
      { connection: 'sim-chat', model: 'up-fb-chat', price: CHAT_PRICE },
    ],
  },
  { alias: 'bg-slow', targets: [{ connection: 'sim-vendora', model: 'up-slow', price: MESSAGES_PRICE }] },
  { alias: 'bg-gemini', targets: [{ connection: 'sim-gemini', model: 'up-gem-1', price: GEMINI_PRICE }] },
];

/** The deferred world's connections plus a generate-content one. */
function worldConfig(simUrl: string): Record<string, unknown> {
  const base = deferredConfig(simUrl);
  const gemini = {
    name: 'sim-gemini',
    profile: 'vendore.generate-content.text.v1beta',
    base_url: simUrl,
    auth: { scheme: 'none' },
  };
  return { ...base, connections: [...(base.connections as unknown[]), gemini], models: MODELS };
}

function expectedCost(entry: AuditEntry, price: typeof MESSAGES_PRICE): number {
  const usage = entry.usage!;
  const micros =
    usage.inputTokens * price.input_per_mtok_micros + usage.outputTokens * price.output_per_mtok_micros;
  return Math.ceil(micros / 1_000_000);
}

/** The attempt once settled (the job finishes the record first, then settles its attempt). */
async function attempt(gateway: TestGateway, id: string): Promise<AuditEntry | undefined> {
  return eventually(
    async () => (await gateway.store.listAudit({ limit: 1000 })).find((entry) => entry.attemptId === id),
    (entry) => entry !== undefined && entry.state !== 'reserved',
  );
}

let world: SimulatorWorld;
let key: string;

beforeAll(async () => {
  world = await startSimulatorWorld({
    environment: { SVC_TEST_SEALING_KEY: SEALING_KEY },
    config: (simUrl) => ({
      ...worldConfig(simUrl),
      jobs: { poll_interval_ms: 10, lease_ms: 2000, sweep_interval_ms: 50, concurrency: 2 },
    }),
  });
  key = await world.gateway.key('prj_a', ['inference']);
});
afterAll(async () => world?.close());
beforeEach(() => {
  world.sim.reset();
  world.sim.clearRequests();
});

describe('background responses on aliases of other wires', () => {
  it.each([
    ['bg-messages', 'messages', '/v1/messages', 'up-msg-1', 'sim-vendora', MESSAGES_PRICE],
    ['bg-chat', 'chat-completions', '/v1/chat/completions', 'up-chat-1', 'sim-chat', CHAT_PRICE],
    [
      'bg-gemini',
      'generate-content',
      '/v1beta/models/up-gem-1:generateContent',
      'up-gem-1',
      'sim-gemini',
      GEMINI_PRICE,
    ],
  ])(
    '%s: queued, run as a job on the %s wire, retrieved as a Response, settled at the target price',
    async (alias, wire, path, upstreamModel, connection, price) => {
      const client = world.client(key);
      const { data: created, response } = await client.responses
        .create({
          model: alias,
          instructions: 'Be brief.',
          input: 'What is the weather in Paris?',
          max_output_tokens: 64,
          background: true,
        })
        .withResponse();
      expect(created).toMatchObject({ object: 'response', status: 'queued', background: true, model: alias });
      expect(response.headers.get('svc-route')).toBe(connection);
      const done = await eventually(
        () => client.responses.retrieve(created.id),
        (value) => value.status === 'completed',
      );
      expect(done).toMatchObject({ id: created.id, object: 'response', model: alias, background: true });
      expect(done.output_text.length).toBeGreaterThan(0);
      expect(done.output[0]).toMatchObject({ type: 'message', role: 'assistant' });
      const sent = world.sim.requests({ wire: wire as 'messages' });
      expect(sent.map((request) => request.path)).toEqual([path]);
      // generate-content names its model in the path.
      if (wire !== 'generate-content') {
        expect((sent[0]!.body as { model: string }).model).toBe(upstreamModel);
      }

      const entry = (await attempt(world.gateway, response.headers.get('svc-attempt-id')!))!;
      expect(entry).toMatchObject({
        endpoint: '/v1/responses',
        alias,
        connection,
        upstreamModel,
        state: 'settled',
        outcome: 'completed',
      });
      expect(entry.usage!.outputTokens).toBe(done.usage!.output_tokens);
      expect(entry.usage!.inputTokens).toBe(done.usage!.input_tokens);
      expect(entry.costMicrosUsd).toBe(expectedCost(entry, price));
      expect(entry.costMicrosUsd).toBeGreaterThan(0);
      expect(entry.costMicrosUsd).toBeLessThanOrEqual(entry.reservationMicrosUsd);
    },
  );

  it('falls back to the next target on a retryable failure: one attempt per target, the record follows', async () => {
    world.sim.setBehaviour({ status: 529, errorMessage: 'overloaded' }, { wire: 'messages', times: 1 });
    const client = world.client(key, { 'Svc-Tags': 'team=jobs' });
    const { data: created, response } = await client.responses
      .create({ model: 'bg-fallback', input: 'hi', max_output_tokens: 16, background: true })
      .withResponse();
    const done = await eventually(
      () => client.responses.retrieve(created.id),
      (value) => value.status === 'completed',
    );
    expect(done.output_text.length).toBeGreaterThan(0);
    const first = (await attempt(world.gateway, response.headers.get('svc-attempt-id')!))!;
    expect(first).toMatchObject({
      upstreamModel: 'up-fb-msg',
      outcome: 'refused_upstream',
      costMicrosUsd: 0,
    });
    const record = (await world.gateway.store.deferredResponses.getById(created.id))!;
    expect(record).toMatchObject({ connection: 'sim-chat', upstreamModel: 'up-fb-chat' });
    const second = (await attempt(world.gateway, record.attemptId))!;
    expect(second).toMatchObject({ upstreamModel: 'up-fb-chat', state: 'settled', outcome: 'completed' });
    expect(second.costMicrosUsd).toBe(expectedCost(second, CHAT_PRICE));
    // The job's fallback serves the same client request: its call, its tags, the failed attempt tried.
    expect(second).toMatchObject({ callId: first.callId, tags: { team: 'jobs' } });
    expect(first.callId).toMatch(/^call_/);
    expect(second.route?.tried.map((tried) => [tried.attempt_id, tried.outcome])).toEqual([
      [first.attemptId, 'refused_upstream'],
    ]);
    expect(world.sim.requests().map((request) => request.path)).toEqual([
      '/v1/messages',
      '/v1/chat/completions',
    ]);
  });

  it('lets Svc-Route pin one target of the alias (and refuses a connection the alias has no target on)', async () => {
    const client = world.client(key, { 'Svc-Route': 'sim-chat' });
    const { data: created, response } = await client.responses
      .create({ model: 'bg-fallback', input: 'hi', max_output_tokens: 16, background: true })
      .withResponse();
    expect(response.headers.get('svc-route')).toBe('sim-chat');
    await eventually(
      () => client.responses.retrieve(created.id),
      (value) => value.status === 'completed',
    );
    expect(world.sim.requests().map((request) => request.path)).toEqual(['/v1/chat/completions']);
    const refused = await world
      .client(key, { 'Svc-Route': 'sim-responses' })
      .responses.create({ model: 'bg-messages', input: 'hi', max_output_tokens: 16, background: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'svc-route',
    });
  });

  it('refuses what the canonical model cannot carry before anything is reserved or sent', async () => {
    const before = (await world.gateway.store.listAudit({ limit: 1000 })).length;
    const refused = await world
      .client(key)
      .responses.create({
        model: 'bg-chat',
        input: 'hi',
        max_output_tokens: 16,
        background: true,
        tools: [{ type: 'web_search' }],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'unsupported_field',
      param: 'tools[0].type',
    });
    const streamed = await world
      .client(key)
      .responses.create({
        model: 'bg-chat',
        input: 'hi',
        max_output_tokens: 16,
        background: true,
        stream: true,
      })
      .catch((error: unknown) => error);
    expect((streamed as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'unsupported_field',
      param: 'stream',
    });
    const unknownAlias = await world
      .client(key)
      .responses.create({ model: 'nope', input: 'hi', max_output_tokens: 16, background: true })
      .catch((error: unknown) => error);
    expect(unknownAlias).toBeInstanceOf(OpenAI.NotFoundError);
    expect(world.sim.requests()).toEqual([]);
    expect((await world.gateway.store.listAudit({ limit: 1000 })).length).toBe(before);
  });

  it('cancel while running aborts the call and commits the reservation; the answer stays responses-wire', async () => {
    world.sim.setBehaviour({ latencyMs: 60_000 }, { model: 'up-slow' });
    const client = world.client(key);
    const { data: created, response } = await client.responses
      .create({ model: 'bg-slow', input: 'slow', max_output_tokens: 32, background: true })
      .withResponse();
    await eventually(
      () => client.responses.retrieve(created.id),
      (value) => value.status === 'in_progress',
    );
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ object: 'response', status: 'cancelled', model: 'bg-slow' });
    const entry = (await attempt(world.gateway, response.headers.get('svc-attempt-id')!))!;
    expect(entry).toMatchObject({ state: 'unknown', outcome: 'cancelled_running' });
    expect(entry.costMicrosUsd).toBe(entry.reservationMicrosUsd);
    const deleted = await client.responses.delete(created.id).then(
      () => 'deleted',
      (error: unknown) => error,
    );
    expect(deleted).toBe('deleted');
  });
});

describePostgres('background responses on any wire across replicas', () => {
  it('a queued response is run by another replica; one running when its replica stopped fails as interrupted', {
    timeout: 45_000,
  }, async () => {
    const sim: Simulator = await startSimulator();
    const database = await createTestDatabase();
    const objects = mkdtempSync(join(tmpdir(), 'svc-bg-objects-'));
    const config = (pollMs: number) => ({
      ...worldConfig(sim.url),
      objects: { sealing_key_env: 'SVC_TEST_SEALING_KEY', path: objects },
      jobs: { poll_interval_ms: pollMs, lease_ms: 2000, sweep_interval_ms: 60_000 },
    });
    const environment = { SVC_TEST_SEALING_KEY: SEALING_KEY };
    const replicas: TestGateway[] = [];
    /** A replica on the shared database, closed at the end unless the test closes it first. */
    const replica = async (pollMs: number): Promise<TestGateway> => {
      const started = await startTestGateway({
        store: 'postgres',
        databaseUrl: database.url,
        environment,
        config: config(pollMs),
      });
      replicas.push(started);
      return started;
    };
    try {
      // The first replica never gets to its jobs (an hour's poll): it only takes the request.
      const first = await replica(3_600_000);
      const secret = await first.key('prj_a', ['inference']);
      const client = (gateway: TestGateway) =>
        new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: secret, maxRetries: 0 });
      const { data: created, response } = await client(first)
        .responses.create({ model: 'bg-chat', input: 'later', max_output_tokens: 32, background: true })
        .withResponse();
      expect(created.status).toBe('queued');
      await first.close();
      replicas.pop();

      const second = await replica(10);
      const done = await eventually(
        () => client(second).responses.retrieve(created.id),
        (value) => value.status === 'completed',
      );
      expect(done.output_text.length).toBeGreaterThan(0);
      const entry = (await attempt(second, response.headers.get('svc-attempt-id')!))!;
      expect(entry).toMatchObject({ state: 'settled', outcome: 'completed', upstreamModel: 'up-chat-1' });
      expect(entry.costMicrosUsd).toBe(expectedCost(entry, CHAT_PRICE));
      expect(sim.requests().map((request) => request.path)).toEqual(['/v1/chat/completions']);

      // A replica that stops while the call runs: the next one finds it in progress and fails it
      // as interrupted, committing the reservation (the upstream may have billed), never calling twice.
      sim.setBehaviour({ latencyMs: 60_000 }, { model: 'up-slow' });
      const slow = await client(second)
        .responses.create({ model: 'bg-slow', input: 'slow', max_output_tokens: 32, background: true })
        .withResponse();
      await eventually(
        () => client(second).responses.retrieve(slow.data.id),
        (value) => value.status === 'in_progress',
      );
      // The record says in_progress just before the request leaves: wait until the upstream has it.
      await eventually(
        async () => sim.requests({ model: 'up-slow' }).length,
        (count) => count === 1,
      );
      await second.close();
      replicas.pop();
      const third = await replica(10);
      const interrupted = await eventually(
        () => client(third).responses.retrieve(slow.data.id),
        (value) => value.status === 'failed',
        10_000,
      );
      expect(interrupted).toMatchObject({ object: 'response', error: { code: 'interrupted' } });
      const committed = (await attempt(third, slow.response.headers.get('svc-attempt-id')!))!;
      expect(committed).toMatchObject({ state: 'unknown', outcome: 'unknown' });
      expect(committed.costMicrosUsd).toBe(committed.reservationMicrosUsd);
      expect(sim.requests({ model: 'up-slow' })).toHaveLength(1);
    } finally {
      for (const replica of replicas) await replica.close();
      await sim.close();
      await database.drop();
      rmSync(objects, { recursive: true, force: true });
    }
  });
});
