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
import { completedSettlement, plainReservation } from '../contract/harness.js';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A store on a fresh file, and a second (read-only) connection that sees only what is committed. */
async function openStore(): Promise<{ store: SqliteStore; reader: Database.Database }> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-group-commit-'));
  folders.push(folder);
  const path = join(folder, 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  return { store, reader: new Database(path, { readonly: true }) };
}

it('a rolled-back group commit leaves its reservations unwritten and its settlements to a retry', async () => {
  const { store, reader } = await openStore();
  const audit = () =>
    reader
      .prepare('SELECT attempt_id, alias, connection, reservation, cost FROM audit ORDER BY sequence')
      .all();
  try {
    await Promise.all([store.reserve(plainReservation('att_a')), store.reserve(plainReservation('att_b'))]);
    // One turn under load: a settlement, a new reservation and a reservation whose id exists
    // (a constraint failure, which aborts the whole group).
    const group = [
      store.settle(completedSettlement('att_a')),
      store.reserve(plainReservation('att_c')),
      store.reserve(plainReservation('att_b')),
    ];
    const results = await Promise.allSettled(group);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(audit()).toEqual([]);
    // The rolled-back reservation was never written: settling it writes nothing.
    expect(await store.settleAndRead(completedSettlement('att_c'))).toBeUndefined();
    // The rolled-back settlement is retried and settles the attempt once, as it was reserved.
    const settled = await store.settleAndRead(completedSettlement('att_a'));
    expect(settled).toMatchObject({ alias: 'demo', reservationMicrosUsd: 10, committedMicrosUsd: 4 });
    expect(await store.settleAndRead(completedSettlement('att_a'))).toBeUndefined();
    await store.settle(completedSettlement('att_b'));
    expect(audit()).toEqual([
      { attempt_id: 'att_a', alias: 'demo', connection: 'sim', reservation: 10, cost: 4 },
      { attempt_id: 'att_b', alias: 'demo', connection: 'sim', reservation: 10, cost: 4 },
    ]);
  } finally {
    reader.close();
    await store.close();
  }
});

it('a lone ledger write commits at once; writes of one turn commit together', async () => {
  const { store, reader } = await openStore();
  const visible = () => (reader.prepare('SELECT count(*) AS n FROM attempts').get() as { n: number }).n;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  let next = 0;
  const reserve = () => store.reserve(plainReservation(`att_${next++}`));
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
