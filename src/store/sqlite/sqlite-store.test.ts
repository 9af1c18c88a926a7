import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCapsContract } from '../contract/caps-contract.js';
import { defineFilesContract } from '../contract/files-contract.js';
import { defineJobsContract } from '../contract/jobs-contract.js';
import { defineReportsContract } from '../contract/reports-contract.js';
import { defineRequestLogContract } from '../contract/request-log-contract.js';
import { defineStoreContract } from '../contract/store-contract.js';
import { SqliteStore } from './sqlite-store.js';

const openSqlite = async () => {
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
};

defineStoreContract('sqlite', openSqlite);
defineFilesContract('sqlite', openSqlite);
defineJobsContract('sqlite', openSqlite);
defineReportsContract('sqlite', openSqlite);
defineCapsContract('sqlite', openSqlite);
defineRequestLogContract('sqlite', openSqlite);
