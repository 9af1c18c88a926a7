/**
 * The SQLite file's page size: a new file gets 1 KiB pages (cheaper ledger commits, docs/decisions.md,
 * "Storage: SQLite"); a file that exists keeps the page size it was created with, and the
 * gateway serves it as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { completedSettlement, plainReservation } from '../contract/harness.js';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function freshPath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'svc-page-size-'));
  folders.push(folder);
  return join(folder, 'svc.db');
}

const pageSize = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
};

async function reserveAndSettle(store: SqliteStore, attemptId: string): Promise<void> {
  await store.reserve(plainReservation(attemptId));
  const settled = await store.settleAndRead(completedSettlement(attemptId));
  expect(settled).toMatchObject({ reservationMicrosUsd: 10, committedMicrosUsd: 4 });
}

it('creates a new file with 1 KiB pages', async () => {
  const path = freshPath();
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  await reserveAndSettle(store, 'att_new');
  await store.close();
  expect(pageSize(path)).toBe(1024);
});

it('keeps the page size of a file that exists (4 KiB, made before) and serves it', async () => {
  const path = freshPath();
  const before = new Database(path);
  before.pragma('page_size = 4096');
  before.pragma('journal_mode = WAL');
  before.exec('CREATE TABLE created_before (id INTEGER)');
  before.close();
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  await reserveAndSettle(store, 'att_old');
  await store.close();
  expect(pageSize(path)).toBe(4096);
});
