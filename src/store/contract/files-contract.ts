/**
 * The files sub-port contract (Store.files), run unchanged against every adapter: Project scoping,
 * idempotent create (replay, conflict, only one record), status updates, removal and expiry, and
 * the keyset-paged list (Project, purpose, order, expiry).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { FileRecord } from '../files-port.js';
import type { Idempotency, Store } from '../port.js';
import { codeOf, type StoreHarness } from './harness.js';

const PROJECT = 'prj_files';
const OTHER = 'prj_other';
const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0 + offsetMs).toISOString();
const DAY = 86_400_000;

let counter = 0;
function idem(fingerprint = 'fp', key = `fk-${++counter}`, projectId = PROJECT): Idempotency {
  return { projectId, keyId: 'key_a', key, fingerprint, createdAt: iso(), expiresAt: iso(DAY) };
}

function record(overrides: Partial<FileRecord> = {}): FileRecord {
  return {
    id: newId('file'),
    projectId: PROJECT,
    keyId: 'key_a',
    connection: 'sim-chat',
    filename: 'notes.jsonl',
    purpose: 'batch',
    bytes: 42,
    sha256: 'a'.repeat(64),
    status: 'processed',
    statusDetails: null,
    upstreamFileId: 'file-up-1',
    createdAt: iso(),
    expiresAt: iso(30 * DAY),
    ...overrides,
  };
}

const render = (file: FileRecord) => ({ id: file.id, bytes: file.bytes });

export function defineFilesContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`files contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    it('creates a record and reads it back exactly, in its Project only', async () => {
      const file = record({ filename: 'ünïcode name.txt', bytes: 3_000_000_000 });
      const result = await store.files.create(file, idem(), render);
      expect(result).toEqual({ status: 200, replayed: false, body: { id: file.id, bytes: 3_000_000_000 } });
      expect(await store.files.get(PROJECT, file.id)).toEqual(file);
      expect(await store.files.get(OTHER, file.id)).toBeUndefined();
      expect(await store.files.get(PROJECT, 'file_unknown')).toBeUndefined();
    });

    it('replays a key with the same request and refuses it with a different one', async () => {
      const key = idem('same');
      const first = record();
      expect((await store.files.create(first, key, render)).replayed).toBe(false);
      expect(await store.files.lookupIdempotency(key)).toEqual({
        kind: 'replay',
        body: { id: first.id, bytes: 42 },
      });
      const second = record();
      expect(await store.files.create(second, key, render)).toEqual({
        status: 200,
        replayed: true,
        body: { id: first.id, bytes: 42 },
      });
      expect(await store.files.get(PROJECT, second.id)).toBeUndefined();
      const different = { ...key, fingerprint: 'other' };
      expect(await codeOf(store.files.lookupIdempotency(different))).toBe('idempotency_conflict');
      expect(await codeOf(store.files.create(record(), different, render))).toBe('idempotency_conflict');
      expect(await store.files.lookupIdempotency(idem())).toEqual({ kind: 'none' });
    });

    it('keeps idempotency keys apart per Project', async () => {
      const key = idem('same', 'shared-key');
      await store.files.create(record(), key, render);
      const elsewhere = record({ projectId: OTHER });
      const result = await store.files.create(elsewhere, idem('same', 'shared-key', OTHER), render);
      expect(result.replayed).toBe(false);
      expect(await store.files.get(OTHER, elsewhere.id)).toEqual(elsewhere);
    });

    it('creates exactly one record when the same key is raced', async () => {
      const key = idem('race');
      const files = Array.from({ length: 8 }, () => record());
      const results = await Promise.allSettled(files.map((file) => store.files.create(file, key, render)));
      const fulfilled = results
        .filter((result) => result.status === 'fulfilled')
        .map((result) => result.value);
      expect(fulfilled.filter((result) => !result.replayed)).toHaveLength(1);
      const ids = new Set(fulfilled.map((result) => (result.body as { id: string }).id));
      expect(ids.size).toBe(1);
      for (const result of results) {
        if (result.status === 'rejected')
          expect((result.reason as GatewayError).code).toBe('idempotency_conflict');
      }
      const stored = await Promise.all(files.map((file) => store.files.get(PROJECT, file.id)));
      expect(stored.filter((file) => file !== undefined)).toHaveLength(1);
    });

    it('updates status in its Project only, removes, and lists expired records', async () => {
      const file = record({ expiresAt: iso(1000) });
      await store.files.insert(file);
      expect(await store.files.setStatus(OTHER, file.id, 'error', 'nope')).toBe(false);
      expect(await store.files.setStatus(PROJECT, file.id, 'error', 'upstream copy not deleted')).toBe(true);
      expect(await store.files.get(PROJECT, file.id)).toMatchObject({
        status: 'error',
        statusDetails: 'upstream copy not deleted',
      });
      const later = record({ expiresAt: iso(5000) });
      await store.files.insert(later);
      expect((await store.files.listExpired(iso(999), 10)).map((found) => found.id)).toEqual([]);
      expect((await store.files.listExpired(iso(1000), 10)).map((found) => found.id)).toEqual([file.id]);
      expect((await store.files.listExpired(iso(9000), 10)).map((found) => found.id)).toEqual([
        file.id,
        later.id,
      ]);
      expect(await store.files.remove(OTHER, file.id)).toBe(false);
      expect(await store.files.remove(PROJECT, file.id)).toBe(true);
      expect(await store.files.remove(PROJECT, file.id)).toBe(false);
      expect(await store.files.get(PROJECT, file.id)).toBeUndefined();
    });

    it("lists a Project's live files by (created_at, id), paged after a cursor, by purpose and order", async () => {
      // Two share a creation time, so the id breaks the tie; one is expired, one is another Project's.
      const files = [
        record({ createdAt: iso(1000), purpose: 'batch' }),
        record({ createdAt: iso(2000), purpose: 'user_data' }),
        record({ createdAt: iso(2000), purpose: 'batch' }),
        record({ createdAt: iso(3000), purpose: 'batch' }),
      ];
      for (const file of files) await store.files.insert(file);
      await store.files.insert(record({ createdAt: iso(4000), expiresAt: iso(5000) }));
      await store.files.insert(record({ projectId: OTHER, createdAt: iso(2500) }));
      const key = (file: FileRecord) => `${file.createdAt} ${file.id}`;
      const newest = [...files].sort((a, b) => (key(a) < key(b) ? 1 : -1)).map((file) => file.id);
      const ids = (rows: FileRecord[]) => rows.map((file) => file.id);
      const nowIso = iso(6000);
      expect(ids(await store.files.list(PROJECT, { limit: 10, order: 'desc', nowIso }))).toEqual(newest);
      expect(ids(await store.files.list(PROJECT, { limit: 10, order: 'asc', nowIso }))).toEqual(
        [...newest].reverse(),
      );
      const pages: string[] = [];
      let after: FileRecord | undefined;
      for (;;) {
        const page = await store.files.list(PROJECT, { limit: 2, order: 'desc', after, nowIso });
        pages.push(...ids(page));
        if (page.length < 2) break;
        after = page.at(-1);
      }
      expect(pages).toEqual(newest);
      expect(
        ids(await store.files.list(PROJECT, { limit: 10, order: 'desc', purpose: 'user_data', nowIso })),
      ).toEqual([files[1]!.id]);
      expect(await store.files.list('prj_none', { limit: 10, order: 'desc', nowIso })).toEqual([]);
      expect((await store.files.list(PROJECT, { limit: 10, order: 'desc', nowIso: iso(0) })).length).toBe(5);
    });
  });
}
