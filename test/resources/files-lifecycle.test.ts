/**
 * File lifecycle beyond a single request: the 30-day TTL (an expired file is gone at once and the
 * sweep removes its upstream copy, content and record), orphaned content, and the same SDK flow on
 * PostgreSQL.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { LocalFolderObjectStore } from '../../src/objects/local-folder.js';
import { objectsFolder } from '../../src/objects/open-objects.js';
import { sweepObjects } from '../../src/objects/sweep.js';
import { objectOwners } from '../../src/startup/compose.js';
import { describePostgres } from '../support/postgres.js';
import { type ResourceGateway, startResourceGateway } from '../support/resource-gateway.js';

const DAY = 86_400_000;

function sweep(world: ResourceGateway, nowMs: number) {
  const { config, store, upstreams } = world.gateway;
  const objects = new LocalFolderObjectStore({ root: objectsFolder(config) });
  const clock = { now: () => nowMs };
  return sweepObjects({
    objects,
    owners: objectOwners({ config, store, objects, upstreams, clock }),
    nowMs,
    graceMs: 3_600_000,
  });
}

describe('file TTL and sweep', () => {
  it('treats a file past its 30 days as gone and sweeps its upstream copy, content and record', async () => {
    const clock = new ManualClock(Date.now());
    const world = await startResourceGateway({ clock });
    try {
      const key = await world.gateway.key('prj_a', ['inference']);
      const client = world.client(key, { 'Svc-Route': 'sim-chat' });
      const created = await client.files.create(
        { file: await toFile(Buffer.from('ephemeral'), 'e.txt'), purpose: 'batch' },
        { headers: { 'Idempotency-Key': 'ttl-1' } },
      );
      const path = join(objectsFolder(world.gateway.config), 'prj_a', created.id);
      clock.advance(30 * DAY - 1000);
      expect((await client.files.retrieve(created.id)).id).toBe(created.id);
      clock.advance(2000);
      await expect(client.files.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
      expect(existsSync(path)).toBe(true);
      world.sim.clearRequests();
      const result = await sweep(world, clock.now());
      expect(result.expired).toBe(1);
      expect(world.sim.requests({ wire: 'chat-side' }).map((request) => request.method)).toEqual(['DELETE']);
      expect(existsSync(path)).toBe(false);
      expect(await world.gateway.store.files.get('prj_a', created.id)).toBeUndefined();
    } finally {
      await world.close();
    }
  });

  it('removes old content no record references, and keeps referenced content', async () => {
    const world = await startResourceGateway();
    try {
      const key = await world.gateway.key('prj_a', ['inference']);
      const created = await world
        .client(key, { 'Svc-Route': 'sim-vendora' })
        .files.create(
          { file: await toFile(Buffer.from('kept'), 'k.txt'), purpose: 'batch' },
          { headers: { 'Idempotency-Key': 'orphan-1' } },
        );
      const folder = join(objectsFolder(world.gateway.config), 'prj_a');
      const objects = new LocalFolderObjectStore({ root: objectsFolder(world.gateway.config) });
      await objects.put('prj_a', 'file_ORPHAN0000000000000000000', Buffer.from('lost'), { sealed: false });
      await objects.put('prj_a', 'spool_LEFTOVER', Buffer.from('audio'), { sealed: false });
      writeFileSync(join(folder, 'not-ours'), 'x');
      const result = await sweep(world, Date.now() + 2 * 3_600_000);
      expect(result).toMatchObject({ orphans: 2, expired: 0 });
      expect(existsSync(join(folder, created.id))).toBe(true);
      expect(existsSync(join(folder, 'file_ORPHAN0000000000000000000'))).toBe(false);
      expect(existsSync(join(folder, 'spool_LEFTOVER'))).toBe(false);
    } finally {
      await world.close();
    }
  });
});

describePostgres('files on PostgreSQL', () => {
  it('uploads, replays, reads and deletes through the SDK', async () => {
    const world = await startResourceGateway({ store: 'postgres' });
    try {
      const key = await world.gateway.key('prj_a', ['inference']);
      const client = world.client(key, { 'Svc-Route': 'sim-chat' });
      const body = Buffer.from('postgres-backed bytes');
      const created = await client.files.create(
        { file: await toFile(body, 'pg.txt'), purpose: 'batch' },
        { headers: { 'Idempotency-Key': 'pg-1' } },
      );
      const replay = await client.files.create(
        { file: await toFile(body, 'pg.txt'), purpose: 'batch' },
        { headers: { 'Idempotency-Key': 'pg-1' } },
      );
      expect(replay).toEqual(created);
      expect(await client.files.retrieve(created.id)).toEqual(created);
      expect(Buffer.from(await (await client.files.content(created.id)).arrayBuffer()).equals(body)).toBe(
        true,
      );
      const other = world.client(await world.gateway.key('prj_b', ['inference']));
      await expect(other.files.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
      expect(await client.files.delete(created.id)).toEqual({
        id: created.id,
        object: 'file',
        deleted: true,
      });
      expect(world.sim.requests({ wire: 'chat-side' }).map((request) => request.method)).toEqual([
        'POST',
        'DELETE',
      ]);
    } finally {
      await world.close();
    }
  });
});
