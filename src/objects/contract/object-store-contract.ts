/**
 * The object-store contract: what files, batches and deferred responses rely on, run against every
 * adapter (the local folder and the S3 bucket). `raw` reads and writes an object's stored bytes
 * behind the adapter's back, so tampering and moving can be checked the same way on both.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ObjectIntegrityError, type ObjectStore, ObjectTooLargeError } from '../port.js';

export interface ObjectStoreHarness {
  /** A store over the same place; `sealingKey` undefined = no key. */
  open(sealingKey: Buffer | undefined): ObjectStore;
  raw: {
    read(projectId: string, key: string): Promise<Buffer>;
    write(projectId: string, key: string, stored: Buffer): Promise<void>;
  };
  /** Bytes per part for the large-object case (multipart on S3). */
  largeBytes: number;
}

export async function bytesOf(stream: Readable | undefined): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export function describeObjectStoreContract(name: string, harness: () => ObjectStoreHarness): void {
  describe(`object store contract: ${name}`, () => {
    const key = randomBytes(32);
    const unique = () => `obj_${randomBytes(6).toString('hex')}`;

    it('round-trips plain bytes from a stream, with length and SHA-256, and lists them', async () => {
      const objects = harness().open(key);
      const data = randomBytes(300_000);
      const id = unique();
      const result = await objects.put(
        'prj_a',
        id,
        Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
        {
          sealed: false,
        },
      );
      expect(result.bytes).toBe(data.length);
      expect(result.sha256).toBe(
        (await import('node:crypto')).createHash('sha256').update(data).digest('hex'),
      );
      expect((await bytesOf(await objects.get('prj_a', id))).equals(data)).toBe(true);
      const listed = [];
      for await (const object of objects.list()) if (object.key === id) listed.push(object);
      expect(listed).toEqual([
        expect.objectContaining({ projectId: 'prj_a', key: id, storedBytes: data.length + 5 }),
      ]);
    });

    it('round-trips a large sealed object (multipart where the adapter has parts)', async () => {
      const h = harness();
      const objects = h.open(key);
      const data = randomBytes(h.largeBytes * 2 + 12_345);
      const id = unique();
      const chunks = [];
      for (let offset = 0; offset < data.length; offset += 64 * 1024)
        chunks.push(data.subarray(offset, offset + 64 * 1024));
      const result = await objects.put('prj_a', id, Readable.from(chunks), { sealed: true });
      expect(result.bytes).toBe(data.length);
      expect((await bytesOf(await objects.get('prj_a', id))).equals(data)).toBe(true);
      expect((await h.raw.read('prj_a', id)).includes(data.subarray(0, 64))).toBe(false);
    });

    it('keeps objects inside their Project and refuses illegal names', async () => {
      const objects = harness().open(key);
      const id = unique();
      await objects.put('prj_a', id, Buffer.from('secret'), { sealed: false });
      expect(await objects.get('prj_b', id)).toBeUndefined();
      expect(await objects.delete('prj_b', id)).toBe(false);
      expect(await objects.get('prj_a', `../prj_a/${id}`)).toBeUndefined();
      await expect(objects.put('prj_a', '../escape', Buffer.from('x'), { sealed: false })).rejects.toThrow(
        /illegal/,
      );
      expect(await bytesOf(await objects.get('prj_a', id))).toEqual(Buffer.from('secret'));
    });

    it('seals at rest; opens only with the right key, Project and object key; detects tampering', async () => {
      const h = harness();
      const objects = h.open(key);
      const id = unique();
      const plaintext = Buffer.from('{"prompt":"very private"}');
      await objects.put('prj_a', id, plaintext, { sealed: true });
      const stored = await h.raw.read('prj_a', id);
      expect(stored.includes(Buffer.from('very private'))).toBe(false);
      expect(await bytesOf(await objects.get('prj_a', id))).toEqual(plaintext);
      await expect(h.open(randomBytes(32)).get('prj_a', id)).rejects.toBeInstanceOf(ObjectIntegrityError);
      await h.raw.write('prj_b', id, stored);
      await expect(objects.get('prj_b', id)).rejects.toBeInstanceOf(ObjectIntegrityError);
      const flipped = Buffer.from(stored);
      flipped[20] = flipped[20]! ^ 0x01;
      await h.raw.write('prj_a', id, flipped);
      await expect(objects.get('prj_a', id)).rejects.toBeInstanceOf(ObjectIntegrityError);
      await h.raw.write('prj_a', id, stored.subarray(0, stored.length - 1));
      await expect(objects.get('prj_a', id)).rejects.toBeInstanceOf(ObjectIntegrityError);
    });

    it('refuses sealed writes without a key, naming the setting', async () => {
      const unsealed = harness().open(undefined);
      await expect(unsealed.put('prj_a', unique(), Buffer.from('x'), { sealed: true })).rejects.toThrow(
        /sealing_key_env/,
      );
      expect(() => unsealed.requireSealing('deferred responses')).toThrow(
        /deferred responses.*sealing_key_env/,
      );
    });

    it('refuses a body over maxBytes and keeps nothing', async () => {
      const objects = harness().open(key);
      const id = unique();
      await expect(
        objects.put('prj_a', id, Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), {
          sealed: false,
          maxBytes: 1000,
        }),
      ).rejects.toBeInstanceOf(ObjectTooLargeError);
      expect(await objects.get('prj_a', id)).toBeUndefined();
      expect(
        (await objects.put('prj_a', id, Buffer.alloc(1000), { sealed: false, maxBytes: 1000 })).bytes,
      ).toBe(1000);
    });

    it('a write that fails mid-stream leaves no object at its key', async () => {
      const h = harness();
      const objects = h.open(key);
      const id = unique();
      async function* failing() {
        yield randomBytes(h.largeBytes + 10);
        throw new Error('client went away');
      }
      await expect(objects.put('prj_a', id, Readable.from(failing()), { sealed: false })).rejects.toThrow(
        'client went away',
      );
      expect(await objects.get('prj_a', id)).toBeUndefined();
      expect(await objects.removeStaleParts(0)).toBeGreaterThanOrEqual(0);
    });

    it('replaces an object and deletes it', async () => {
      const objects = harness().open(key);
      const id = unique();
      await objects.put('prj_a', id, Buffer.from('one'), { sealed: false });
      await objects.put('prj_a', id, Buffer.from('two'), { sealed: true });
      expect(await bytesOf(await objects.get('prj_a', id))).toEqual(Buffer.from('two'));
      expect(await objects.delete('prj_a', id)).toBe(true);
      expect(await objects.delete('prj_a', id)).toBe(false);
      expect(await objects.get('prj_a', id)).toBeUndefined();
    });

    it('stores an empty object', async () => {
      const objects = harness().open(key);
      const id = unique();
      expect((await objects.put('prj_a', id, Buffer.alloc(0), { sealed: false })).bytes).toBe(0);
      expect((await bytesOf(await objects.get('prj_a', id))).length).toBe(0);
    });
  });
}
