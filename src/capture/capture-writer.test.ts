import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../lib/ids.js';
import { createLogger } from '../lib/logger.js';
import { LocalFolderObjectStore } from '../objects/local-folder.js';
import type { ObjectStore } from '../objects/port.js';
import { BodyTap } from './body-tap.js';
import { capturedBody } from './capture-document.js';
import { captureAddressOf, timeOfCaptureKey } from './capture-keys.js';
import { CapturePolicy } from './capture-policy.js';
import { CaptureReader } from './capture-reader.js';
import { type CallCapture, type CaptureDropReason, CaptureWriter } from './capture-writer.js';

const NOW = Date.parse('2026-11-28T04:08:32.123Z');

function tapOf(text: string, max = 1024): BodyTap {
  const tap = new BodyTap(max);
  tap.add(text);
  return tap;
}

function callCapture(attemptIds: string[], text = '{"prompt":"hi"}'): CallCapture {
  return {
    projectId: 'prj_a',
    attemptIds,
    capturedAtMs: NOW,
    request: { contentType: 'application/json', tap: tapOf(text) },
    response: { status: 200, contentType: 'application/json', tap: tapOf('{"ok":true}') },
  };
}

describe('body tap and stored bodies', () => {
  it('keeps at most maxBytes of strings and buffers, counts every byte, flags the cut', () => {
    const tap = new BodyTap(10);
    tap.add('abcdef');
    tap.add(Buffer.from('ghijkl'));
    tap.add('mnop');
    expect(tap.content().toString()).toBe('abcdefghij');
    expect(tap.bytes).toBe(16);
    expect(tap.truncated).toBe(true);
    const exact = new BodyTap(3);
    exact.add('abc');
    expect(exact.truncated).toBe(false);
    const reused = Buffer.from('xyz');
    const copy = new BodyTap(10);
    copy.add(reused);
    reused.write('___');
    expect(copy.content().toString()).toBe('xyz');
  });

  it('text bodies as UTF-8 (a cut never splits a character), binary bodies as base64', () => {
    const tap = new BodyTap(5);
    tap.add('ab€cd'); // € is 3 bytes: a b [e2 82 ac] c d -> 5 kept bytes end inside nothing
    expect(capturedBody('application/json', tap.content(), tap.bytes, tap.truncated)).toMatchObject({
      encoding: 'utf8',
      body: 'ab€',
      truncated: true,
    });
    const cut = new BodyTap(4);
    cut.add('ab€cd');
    expect(capturedBody('text/plain', cut.content(), cut.bytes, cut.truncated).body).toBe('ab');
    const audio = randomBytes(64);
    expect(capturedBody('audio/mpeg', audio, 64, false)).toEqual({
      content_type: 'audio/mpeg',
      encoding: 'base64',
      body: audio.toString('base64'),
      bytes: 64,
      truncated: false,
    });
    const invalid = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(capturedBody('application/json', invalid, 4, false).encoding).toBe('base64');
  });

  it('keys carry the attempt time and read back; other keys do not', () => {
    const attemptId = newTimeOrderedId('att', NOW);
    const address = captureAddressOf(attemptId)!;
    expect(address.key).toBe(`cap_20261128T040832Z_${attemptId}`);
    expect(timeOfCaptureKey(address.key)).toBe(NOW);
    expect(timeOfCaptureKey(`cap_20261128T040831Z_${attemptId}`)).toBeUndefined();
    expect(timeOfCaptureKey('cap_garbage')).toBeUndefined();
    expect(captureAddressOf('file_ABC')).toBeUndefined();
  });
});

describe('the capture writer', () => {
  let root: string;
  let objects: LocalFolderObjectStore;
  let drops: CaptureDropReason[];
  let logs: string[];
  const logger = () =>
    createLogger(
      'info',
      new Writable({
        write(chunk, _encoding, done) {
          logs.push(String(chunk));
          done();
        },
      }),
    );
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-capture-'));
    objects = new LocalFolderObjectStore({ root, sealingKey: randomBytes(32) });
    drops = [];
    logs = [];
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes one capture per call and a pointer per earlier attempt; the reader finds it from each', async () => {
    const writer = new CaptureWriter({
      objects,
      logger: logger(),
      onDropped: (reason) => drops.push(reason),
    });
    const ids = [newTimeOrderedId('att', NOW), newTimeOrderedId('att', NOW + 5)];
    expect(writer.offer(callCapture(ids))).toBe(true);
    await writer.idle();
    const reader = new CaptureReader({
      objects,
      policy: new CapturePolicy([]),
      clock: { now: () => NOW + 1000 },
    });
    for (const id of ids) {
      const view = await reader.read('prj_a', id);
      expect(view?.attempt_id).toBe(id);
      expect(view?.call_attempt_ids).toEqual(ids);
      expect(view?.request.body).toBe('{"prompt":"hi"}');
    }
    expect(await reader.read('prj_b', ids[0]!)).toBeUndefined();
    expect(await reader.status('prj_a', ids[1]!)).toEqual({
      available: true,
      expires_at: new Date(NOW + 5 + 168 * 3_600_000).toISOString(),
    });
    expect(drops).toEqual([]);
  });

  it('a full queue drops new captures (counted, logged by id only); a closed writer drops as shutdown', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: ObjectStore = Object.assign(Object.create(objects) as ObjectStore, {
      put: async (...args: Parameters<ObjectStore['put']>) => {
        await gate;
        return objects.put(...args);
      },
    });
    const writer = new CaptureWriter({
      objects: slow,
      logger: logger(),
      onDropped: (reason) => drops.push(reason),
      maxQueued: 2,
      concurrency: 1,
    });
    const offers = Array.from({ length: 5 }, (_, index) =>
      writer.offer(callCapture([newTimeOrderedId('att', NOW + index)], `{"secret":"body-${index}"}`)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    // One is being written, two wait: the rest are dropped.
    expect(offers.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(drops.every((reason) => reason === 'queue_full')).toBe(true);
    expect(drops.length).toBe(offers.filter((accepted) => !accepted).length);
    release();
    await writer.close(1000);
    expect(writer.offer(callCapture([newTimeOrderedId('att', NOW)]))).toBe(false);
    expect(drops.at(-1)).toBe('shutdown');
    expect(logs.join('')).toContain('capture dropped');
    expect(logs.join('')).not.toContain('body-');
  });

  it('an object-store failure drops the capture and counts it', async () => {
    const failing: ObjectStore = Object.assign(Object.create(objects) as ObjectStore, {
      put: async () => {
        throw new Error('disk on fire');
      },
    });
    const writer = new CaptureWriter({
      objects: failing,
      logger: logger(),
      onDropped: (reason) => drops.push(reason),
    });
    expect(writer.offer(callCapture([newTimeOrderedId('att', NOW)]))).toBe(true);
    await writer.idle();
    expect(drops).toEqual(['object_store']);
  });
});
