/**
 * The simulated chat-completions resources (files and the media endpoints), driven by the official vendorb SDK pointed
 * straight at the simulator: proof the simulated wire is faithful enough for a real client.
 */
import OpenAI, { toFile } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSimulator } from '../test-support.js';

let client: OpenAI;

const sim = useSimulator();

beforeAll(() => {
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});

describe('simulated chat-completions resources', () => {
  it('keeps uploaded files: create, retrieve, content, delete', async () => {
    const created = await client.files.create({
      file: await toFile(Buffer.from('line\n'), 'in.jsonl'),
      purpose: 'batch',
    });
    expect(created).toMatchObject({
      object: 'file',
      bytes: 5,
      filename: 'in.jsonl',
      purpose: 'batch',
      status: 'processed',
    });
    expect(created.id).toMatch(/^file-/);
    expect(await client.files.retrieve(created.id)).toEqual(created);
    expect(await (await client.files.content(created.id)).text()).toBe('line\n');
    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('answers speech, transcriptions, images and moderations in the wire shapes', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await speech.arrayBuffer()).toString()).toBe('SIMAUDIO:mp3:hi');
    const transcript = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(32_000), 'a.wav'),
      model: 'whisper-1',
    });
    expect(transcript).toEqual({
      text: 'Transcribed 32000 bytes of audio.',
      usage: { type: 'duration', seconds: 2 },
    });
    const vtt = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(10), 'a.wav'),
      model: 'whisper-1',
      response_format: 'vtt',
    });
    expect(vtt).toMatch(/^WEBVTT/);
    const images = await client.images.generate({ prompt: 'cat', n: 3, response_format: 'url' });
    expect(images.data?.map((item) => typeof item.url)).toEqual(['string', 'string', 'string']);
    const moderation = await client.moderations.create({ input: [{ type: 'text', text: 'flag-me' }] });
    expect(moderation.results[0]).toMatchObject({
      flagged: true,
      categories: { harassment: true, hate: false },
    });
  });

  it('answers a behaviour error in the wire error shape', async () => {
    sim.setBehaviour({ status: 503, errorMessage: 'busy' }, { wire: 'chat-side', times: 1 });
    await expect(client.moderations.create({ input: 'x' })).rejects.toMatchObject({
      status: 503,
      error: { message: 'busy', type: 'server_error' },
    });
  });
});
