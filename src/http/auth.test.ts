/**
 * The key cache's staleness bound, on a real SQLite store and a manual clock: a revocation made
 * elsewhere (another replica, the CLI) is honoured once key_cache_ms has passed since the lookup,
 * and no later; a revocation made here (forget) at once; an expiry exactly at expires_at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../errors/gateway-error.js';
import { ManualClock } from '../lib/clock.js';
import { hashSecret, newKeySecret } from '../lib/secrets.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { Authenticator } from './auth.js';

describe('Authenticator cache bound', () => {
  let folder: string;
  let store: SqliteStore;
  const clock = new ManualClock(Date.parse('2026-11-23T10:00:00.000Z'));

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'svc-auth-'));
    store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  async function key(
    expiresAt: string | null = null,
  ): Promise<{ id: string; headers: { 'x-api-key': string } }> {
    const secret = newKeySecret();
    const id = `key_${secret.slice(3, 15)}`;
    await store.keys.create(
      {
        id,
        projectId: 'prj_a',
        secretHash: hashSecret(secret),
        scopes: ['inference'],
        label: null,
        createdAt: new Date(clock.now()).toISOString(),
        expiresAt,
        models: ['alias-1'],
        limits: {},
      },
      null,
      (record) => record,
    );
    return { id, headers: { 'x-api-key': secret } };
  }

  async function refusal(authenticator: Authenticator, headers: { 'x-api-key': string }): Promise<string> {
    try {
      await authenticator.authenticate(headers);
      return 'accepted';
    } catch (error) {
      return (error as GatewayError).message;
    }
  }

  it('honours a revocation made elsewhere after exactly key_cache_ms, not before', async () => {
    const authenticator = new Authenticator(store, clock, 2000);
    const { id, headers } = await key();
    expect(await authenticator.authenticate(headers)).toEqual({
      keyId: id,
      projectId: 'prj_a',
      scopes: ['inference'],
      models: ['alias-1'],
    });
    await store.keys.revoke(
      { projectId: 'prj_a', id, revokedAt: new Date(clock.now()).toISOString() },
      null,
      (r) => r,
    );
    clock.advance(1999);
    expect(await refusal(authenticator, headers)).toBe('accepted');
    clock.advance(1);
    expect(await refusal(authenticator, headers)).toBe('Invalid or revoked Gateway Key.');
  });

  it('forgets a key revoked on this replica at once, and key_cache_ms 0 never caches', async () => {
    const cached = new Authenticator(store, clock, 60_000);
    const uncached = new Authenticator(store, clock, 0);
    const { id, headers } = await key();
    await cached.authenticate(headers);
    await uncached.authenticate(headers);
    await store.keys.revoke(
      { projectId: 'prj_a', id, revokedAt: new Date(clock.now()).toISOString() },
      null,
      (r) => r,
    );
    expect(await refusal(uncached, headers)).toBe('Invalid or revoked Gateway Key.');
    expect(await refusal(cached, headers)).toBe('accepted');
    cached.forget(id);
    expect(await refusal(cached, headers)).toBe('Invalid or revoked Gateway Key.');
  });

  it('refuses an expired key from the first millisecond of its expiry, cached or not', async () => {
    const authenticator = new Authenticator(store, clock, 60_000);
    const { headers } = await key(new Date(clock.now() + 5000).toISOString());
    await authenticator.authenticate(headers);
    clock.advance(4999);
    expect(await refusal(authenticator, headers)).toBe('accepted');
    clock.advance(1);
    expect(await refusal(authenticator, headers)).toBe('The Gateway Key has expired.');
  });
});
