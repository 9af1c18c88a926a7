/**
 * The simulated embeddings endpoint, driven by the official vendorb SDK pointed straight at the
 * simulator: vectors are deterministic unit vectors, `dimensions` is honoured, base64 is
 * little-endian float32 (the SDK's default, decoded by the SDK), usage is reported, errors are the
 * vendor's.
 */
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSimulator } from '../test-support.js';

let client: OpenAI;

const sim = useSimulator();

beforeAll(() => {
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});

describe('simulated embeddings', () => {
  it('answers the same unit vector for the same input, in float and base64', async () => {
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'hello',
      encoding_format: 'float',
    });
    expect(decoded.data[0]!.embedding).toHaveLength(1536);
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding);
    const norm = Math.hypot(...floats.data[0]!.embedding);
    expect(norm).toBeCloseTo(1, 5);
    expect(floats).toMatchObject({
      object: 'list',
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    const other = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'world' });
    expect(other.data[0]!.embedding).not.toEqual(decoded.data[0]!.embedding);
  });

  it('honours dimensions and counts token arrays by length', async () => {
    const large = await client.embeddings.create({
      model: 'text-embedding-3-large',
      input: [[1, 2, 3], [4]],
    });
    expect(large.data.map((item) => [item.index, item.embedding.length])).toEqual([
      [0, 3072],
      [1, 3072],
    ]);
    expect(large.usage.prompt_tokens).toBe(4);
    const small = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'x',
      dimensions: 3,
    });
    expect(small.data[0]!.embedding).toHaveLength(3);
  });

  it('refuses what the vendor refuses', async () => {
    await expect(
      client.embeddings.create({ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 }),
    ).rejects.toMatchObject({ status: 400, param: 'dimensions' });
    await expect(
      client.embeddings.create({ model: 'text-embedding-3-small', input: '' }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'input',
    });
    await expect(
      client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 5000 }),
    ).rejects.toMatchObject({ status: 400, param: 'dimensions' });
  });
});
