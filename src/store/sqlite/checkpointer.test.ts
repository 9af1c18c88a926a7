/**
 * WAL checkpoints happen off the event loop: the main connection never checkpoints
 * (wal_autocheckpoint = 0, no timer), yet the pages written reach the database file within a few
 * seconds, copied there by the worker thread's own connection.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { WalCheckpointer } from './checkpointer.js';
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

it('after a complete checkpoint the worker rewinds the WAL itself, never while the main thread holds the lock', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const main = new Database(path);
  main.pragma('journal_mode = WAL');
  main.pragma('wal_autocheckpoint = 0');
  main.pragma('user_version = 7');
  main.exec('CREATE TABLE rows (text TEXT)');
  const insert = main.prepare('INSERT INTO rows (text) VALUES (?)');
  const failures: string[] = [];
  const checkpointer = new WalCheckpointer(path, 20, (reason) => failures.push(reason));
  // Frames in the WAL, as another connection counts them (its PASSIVE checkpoint copies nothing new).
  const probe = new Database(path);
  const walFrames = () => (probe.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
  const until = async (condition: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return condition();
  };
  try {
    expect(checkpointer.tryHold()).toBe(true);
    for (let index = 0; index < 50; index++) insert.run('x'.repeat(1000));
    // Held: the worker checkpoints but does not write, so the WAL keeps every frame.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(walFrames()).toBeGreaterThan(10);
    checkpointer.release();
    // Released: the worker's one-page write starts the WAL again from its beginning.
    expect(await until(() => walFrames() === 1)).toBe(true);
    expect(main.pragma('user_version', { simple: true })).toBe(7);
    expect(main.prepare('SELECT count(*) AS rows FROM rows').get()).toEqual({ rows: 50 });
  } finally {
    await checkpointer.stop();
    probe.close();
    main.close();
  }
  // Stopped on purpose: not a failure.
  expect(failures).toEqual([]);
});

it('when the checkpoint worker dies, the store checkpoints on its own connection again and warns once', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    await store.migrate();
    const internals = store as unknown as {
      db: Database.Database;
      checkpointer: { worker: { terminate(): Promise<number> } } | undefined;
    };
    expect(internals.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await internals.checkpointer!.worker.terminate();
    const deadline = Date.now() + 5000;
    while (warnings.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings.map((warning) => (warning as { code?: string }).code)).toEqual([
      'SVC_SQLITE_CHECKPOINTER',
    ]);
    expect(warnings[0]!.message).toMatch(/checkpoints run on the main connection until restart/);
    expect(internals.checkpointer).toBeUndefined();
    expect(internals.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // The ledger keeps committing without the worker's lock.
    await store.createKey({
      id: 'key_after',
      projectId: 'prj_a',
      secretHash: 'hash_after',
      scopes: [],
      label: null,
      createdAt: new Date().toISOString(),
    });
  } finally {
    process.off('warning', onWarning);
    await store.close();
  }
});

/** Threads of this process at `nice` (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadsAtNice(nice: number): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]) === nice;
  }).length;
}

it.runIf(process.platform === 'linux')(
  'the checkpoint worker runs at nice 10, the event loop where it was',
  async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
    folders.push(folder);
    const path = join(folder, 'svc.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.close();
    const eventLoop = getPriority();
    const before = threadsAtNice(10);
    const checkpointer = new WalCheckpointer(path, 1000, () => {});
    try {
      const deadline = Date.now() + 3000;
      while (threadsAtNice(10) === before && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(threadsAtNice(10)).toBe(before + 1);
      expect(getPriority()).toBe(eventLoop);
    } finally {
      await checkpointer.stop();
    }
  },
);
