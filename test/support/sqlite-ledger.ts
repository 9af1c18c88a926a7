/**
 * A ledger on a fresh SQLite store in a temporary folder, with its attempt runner, for unit tests
 * of the ledger (real store, no HTTP). close() stops the reaper, closes the store, removes the folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AttemptRunner } from '../../src/ledger/attempt-runner.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { type AttemptObserver, noAttemptObserver } from '../../src/observability/attempt-observer.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

export interface SqliteLedger {
  store: SqliteStore;
  ledger: Ledger;
  runner: AttemptRunner;
  close(): Promise<void>;
}

export async function openSqliteLedger(observer: AttemptObserver = noAttemptObserver): Promise<SqliteLedger> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-ledger-'));
  const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await store.migrate();
  const ledger = new Ledger(
    store,
    systemClock,
    pino({ level: 'silent' }),
    { leaseMs: 900_000, reaperIntervalMs: 60_000 },
    observer,
  );
  return {
    store,
    ledger,
    runner: new AttemptRunner(ledger),
    async close() {
      ledger.stopReaper();
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
