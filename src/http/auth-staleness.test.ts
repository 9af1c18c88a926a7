/**
 * The documented bound on per-replica state: each replica caches key lookups for two seconds, so a
 * key revoked through one replica (or the CLI) stops working on every replica within two seconds.
 * Two Authenticators on one store stand for two replicas.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../lib/clock.js';
import { hashSecret, newKeySecret } from '../lib/secrets.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { Authenticator, KEY_CACHE_MS } from './auth.js';

describe('key cache staleness across replicas', () => {
  let folder: string;
  let store: SqliteStore;
  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'svc-auth-'));
    store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal', exclusive: false });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a revocation reaches every replica within KEY_CACHE_MS (2 s), and not a cached answer later', async () => {
    const clock = new ManualClock();
    const replicas = [new Authenticator(store, clock), new Authenticator(store, clock)];
    const secret = newKeySecret();
    await store.createKey({
      id: 'key_a',
      projectId: 'prj_a',
      secretHash: hashSecret(secret),
      scopes: ['inference'],
      label: null,
      createdAt: new Date(clock.now()).toISOString(),
    });
    const headers = { 'x-api-key': secret };
    for (const replica of replicas) expect((await replica.authenticate(headers)).keyId).toBe('key_a');
    await store.revokeKey('key_a', new Date(clock.now()).toISOString());
    clock.advance(KEY_CACHE_MS - 1);
    // Within the bound a replica may still answer from its cache...
    expect((await replicas[0]!.authenticate(headers)).keyId).toBe('key_a');
    clock.advance(1);
    // ...and at the bound every replica has looked again.
    for (const replica of replicas) await expect(replica.authenticate(headers)).rejects.toThrow(/revoked/);
    expect(KEY_CACHE_MS).toBe(2000);
  });
});
