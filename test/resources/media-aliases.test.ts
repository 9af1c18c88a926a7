/**
 * Media aliases end to end with the vendorb SDK (issue 15): the alias's target decides the model id
 * sent upstream (the simulator records what it received) and the prices the attached Run is charged
 * at, which differ from those of another alias on the same connection.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/gateway.js';
import { type ResourceGateway, startResourceGateway } from '../support/resource-gateway.js';

let world: ResourceGateway;
let key: string;

beforeAll(async () => {
  world = await startResourceGateway();
  key = await world.gateway.key('prj_a', ['inference', 'run:attach']);
});
afterAll(async () => world?.close());

async function newRun(budget: number): Promise<string> {
  const governance = await world.gateway.key('prj_a', ['work_unit:create', 'run:create']);
  const unit = await call(world.gateway.url, 'POST', '/svc/v1/work-units', {
    key: governance,
    body: {},
    idempotencyKey: `wu-${Math.random()}`,
  });
  const run = await call(world.gateway.url, 'POST', '/svc/v1/runs', {
    key: governance,
    body: { work_unit_id: unit.body.id, budget_micros_usd: budget },
    idempotencyKey: `run-${Math.random()}`,
  });
  return run.body.id as string;
}

async function committed(runId: string): Promise<number> {
  const view = await call(world.gateway.url, 'GET', `/svc/v1/runs/${runId}`, {
    key: await world.gateway.key('prj_a', ['governance:read']),
  });
  expect(view.body.reserved_micros_usd).toBe(0);
  return view.body.committed_micros_usd as number;
}

describe('media aliases', () => {
  it('sends each target its own model id and charges the Run at that model price', async () => {
    const runId = await newRun(1_000_000);
    const client = world.client(key, { 'X-Svc-Run-ID': runId });
    world.sim.clearRequests();

    const audio = await client.audio.speech.create({ model: 'voice-hd', voice: 'alloy', input: 'Hello' });
    expect(Buffer.from(await audio.arrayBuffer()).toString()).toContain('Hello');
    expect(await committed(runId)).toBe(5 * 30); // 5 characters at 30 000 000 per million
    const standard = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello' });
    await standard.arrayBuffer();
    expect(await committed(runId)).toBe(5 * 30 + 5 * 15);

    const images = await client.images.generate({ model: 'painter', prompt: 'a lighthouse', quality: 'hd' });
    expect(images.data).toHaveLength(1);
    expect(await committed(runId)).toBe(225 + 80_000); // 1024x1024 (the default size) hd

    const text = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(48_000, 7), 'clip.wav'),
      model: 'ears-fast',
    });
    expect(text.text).toContain('48000 bytes');
    expect(await committed(runId)).toBe(225 + 80_000 + 3 * 250); // 3 s at 250 per second

    const sent = world.sim.requests({ wire: 'chat-side' });
    expect(sent.map((request) => request.path)).toEqual([
      '/v1/audio/speech',
      '/v1/audio/speech',
      '/v1/images/generations',
      '/v1/audio/transcriptions',
    ]);
    expect((sent[0]!.body as { model: string }).model).toBe('sim-tts-hd');
    expect((sent[1]!.body as { model: string }).model).toBe('tts-1');
    expect((sent[2]!.body as { model: string }).model).toBe('sim-image-2');
    const audit = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 1000 });
    expect(audit.slice(-4).map((entry) => [entry.alias, entry.upstreamModel, entry.costMicrosUsd])).toEqual([
      ['voice-hd', 'sim-tts-hd', 150],
      ['tts-1', 'tts-1', 75],
      ['painter', 'sim-image-2', 80_000],
      ['ears-fast', 'sim-whisper-fast', 750],
    ]);
    expect(audit.at(-1)).toMatchObject({ reservationMicrosUsd: 120 * 250 });
  });

  it('refuses a size or quality the target does not price, before any upstream call', async () => {
    world.sim.clearRequests();
    const client = world.client(key);
    const refused = await client.images
      .generate({ model: 'painter', prompt: 'p', size: '1792x1024', quality: 'standard' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('1792x1024 standard is not priced for model painter'),
    });
    expect(world.sim.requests()).toEqual([]);
  });
});
