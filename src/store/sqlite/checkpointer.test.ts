/**
 * WAL checkpoints happen off the event loop: the main connection never checkpoints
 * (wal_autocheckpoint = 0, no timer), yet the pages written reach the database file within a few
 * seconds, copied there by the worker thread's own connection.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

it('the checkpoint worker folds the WAL into the database file while the main connection never checkpoints', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  try {
    await store.migrate();
    const before = statSync(path).size;
    for (let index = 0; index < 300; index++) {
      await store.createKey({
        id: `key_${index}`,
        projectId: 'prj_a',
        secretHash: `hash_${index}_${'x'.repeat(200)}`,
        scopes: [],
        label: null,
        createdAt: new Date().toISOString(),
      });
    }
    const deadline = Date.now() + 5000;
    while (statSync(path).size <= before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statSync(path).size).toBeGreaterThan(before);
    // Every row is readable from another connection (the WAL and the file agree).
    const reader = new Database(path, { readonly: true });
    try {
      expect(reader.prepare('SELECT count(*) AS keys FROM gateway_keys').get()).toEqual({ keys: 300 });
    } finally {
      reader.close();
    }
  } finally {
    await store.close();
  }
});
