import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFolderObjectStore } from './local-folder.js';
import { ObjectIntegrityError, ObjectTooLargeError } from './port.js';
import { parseSealingKey } from './sealing.js';

const KEY = randomBytes(32);

async function text(stream: Readable | undefined): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('local folder object store', () => {
  let root: string;
  let objects: LocalFolderObjectStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-objects-'));
    objects = new LocalFolderObjectStore({ root, sealingKey: KEY });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('round-trips plain bytes exactly from a stream, with length and SHA-256', async () => {
    const data = randomBytes(300_000);
    const result = await objects.put(
      'prj_a',
      'file_1',
      Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
      { sealed: false },
    );
    expect(result.bytes).toBe(data.length);
    expect(result.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await text(await objects.get('prj_a', 'file_1'))).equals(data)).toBe(true);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
  });

  it('seals at rest and opens only with the right key, Project and object key', async () => {
    const plaintext = Buffer.from('{"prompt":"very private"}');
    await objects.put('prj_a', 'resp_1', plaintext, { sealed: true });
    const stored = readFileSync(join(root, 'prj_a', 'resp_1'));
    expect(stored.includes(Buffer.from('very private'))).toBe(false);
    expect(await text(await objects.get('prj_a', 'resp_1'))).toEqual(plaintext);
    const otherKey = new LocalFolderObjectStore({ root, sealingKey: randomBytes(32) });
    await expect(otherKey.get('prj_a', 'resp_1')).rejects.toBeInstanceOf(ObjectIntegrityError);
    // Moved into another Project's folder, the object no longer authenticates.
    writeFileSync(join(root, 'prj_b-copy'), stored);
    await objects.put('prj_b', 'placeholder', Buffer.from('x'), { sealed: false });
    renameSync(join(root, 'prj_b-copy'), join(root, 'prj_b', 'resp_1'));
    await expect(objects.get('prj_b', 'resp_1')).rejects.toBeInstanceOf(ObjectIntegrityError);
  });

  it('refuses a body over maxBytes and leaves nothing behind', async () => {
    await expect(
      objects.put('prj_a', 'file_big', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), {
        sealed: false,
        maxBytes: 1000,
      }),
    ).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(await objects.get('prj_a', 'file_big')).toBeUndefined();
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
    const exact = await objects.put('prj_a', 'file_ok', Buffer.alloc(1000), {
      sealed: false,
      maxBytes: 1000,
    });
    expect(exact.bytes).toBe(1000);
  });

  it('never shows a half-written object at its key while a write is in progress or fails', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slow() {
      yield Buffer.from('first half ');
      await gate;
      throw new Error('client went away');
    }
    const writing = objects.put('prj_a', 'file_1', Readable.from(slow()), { sealed: false });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(join(root, 'prj_a', 'file_1'))).toBe(false);
    expect(readdirSync(join(root, '.tmp'))).toHaveLength(1);
    release();
    await expect(writing).rejects.toThrow('client went away');
    expect(existsSync(join(root, 'prj_a', 'file_1'))).toBe(false);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
  });

  it('parses 32-byte keys in hex or base64 and refuses anything else', () => {
    const key = randomBytes(32);
    expect(parseSealingKey(key.toString('hex'), 'test')).toEqual(key);
    expect(parseSealingKey(key.toString('base64'), 'test')).toEqual(key);
    expect(() => parseSealingKey('short', 'SVC_KEY')).toThrow(/SVC_KEY.*32 bytes/);
    expect(() => parseSealingKey(randomBytes(16).toString('hex'), 'SVC_KEY')).toThrow(/32 bytes/);
  });
});
