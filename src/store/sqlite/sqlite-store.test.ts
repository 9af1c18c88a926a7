import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineStoreContract } from '../contract/store-contract.js';
import { SqliteStore } from './sqlite-store.js';

defineStoreContract('sqlite', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
  const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await store.migrate();
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
});
