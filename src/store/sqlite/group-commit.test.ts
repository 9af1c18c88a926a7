/**
 * The SQLite ledger's group commit: writes arriving in the same turn of the event loop commit as
 * one transaction, while a write arriving alone (the previous group held one item) commits at once
 * instead of waiting a turn. Visibility is read from a second connection to the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

it('a lone ledger write commits at once; writes of one turn commit together', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-group-commit-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  const reader = new Database(path, { readonly: true });
  const visible = () => (reader.prepare('SELECT count(*) AS n FROM attempts').get() as { n: number }).n;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  let next = 0;
  const reserve = () => {
    const now = Date.now();
    return store.reserve({
      attemptId: `att_${next++}`,
      projectId: 'prj_a',
      keyId: 'key_a',
      runId: null,
      reservationMicrosUsd: 10,
      now,
      createdAt: new Date(now).toISOString(),
      leaseExpiresAt: new Date(now + 60_000).toISOString(),
      owner: 'owner-1',
      endpoint: '/v1/messages',
      alias: 'demo',
      connection: 'sim',
      profile: 'vendora.messages.2023-06-01',
      upstreamModel: 'sim-1',
    });
  };
  try {
    // Alone: durable before reserve() even returns its promise.
    const lone = reserve();
    expect(visible()).toBe(1);
    await lone;
    await nextTurn();
    // Three in one turn: the first goes alone (the last group held one), the other two wait for
    // the turn's group commit.
    const turn = [reserve(), reserve(), reserve()];
    expect(visible()).toBe(2);
    await Promise.all(turn);
    expect(visible()).toBe(4);
    await nextTurn();
    // After a group of two, the next turn's writes all wait for its group commit (load continues).
    const loaded = [reserve(), reserve(), reserve()];
    expect(visible()).toBe(4);
    await Promise.all(loaded);
    expect(visible()).toBe(7);
  } finally {
    reader.close();
    await store.close();
  }
});
