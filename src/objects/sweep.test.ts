import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFolderObjectStore } from './local-folder.js';
import { sweepObjects } from './sweep.js';

const HOUR = 3_600_000;

describe('object sweep', () => {
  let root: string;
  let objects: LocalFolderObjectStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-sweep-'));
    objects = new LocalFolderObjectStore({ root });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function age(path: string, ms: number): void {
    const when = new Date(Date.now() - ms);
    utimesSync(path, when, when);
  }

  it('removes stale parts, expired records and old orphans; keeps referenced, young and unclaimed objects', async () => {
    await objects.put('prj_a', 'file_live', Buffer.from('a'), { sealed: false });
    await objects.put('prj_a', 'file_orphan', Buffer.from('b'), { sealed: false });
    await objects.put('prj_a', 'file_young', Buffer.from('c'), { sealed: false });
    await objects.put('prj_b', 'other_thing', Buffer.from('d'), { sealed: false });
    age(join(root, 'prj_a', 'file_live'), 2 * HOUR);
    age(join(root, 'prj_a', 'file_orphan'), 2 * HOUR);
    age(join(root, 'prj_b', 'other_thing'), 2 * HOUR);
    writeFileSync(join(root, '.tmp', 'killed.part'), 'half');
    age(join(root, '.tmp', 'killed.part'), 2 * HOUR);
    writeFileSync(join(root, '.tmp', 'in-progress.part'), 'half');
    const expiredSeen: number[] = [];
    const result = await sweepObjects({
      objects,
      nowMs: Date.now(),
      graceMs: HOUR,
      owners: [
        {
          prefix: 'file_',
          referenced: async (_project, key) => key === 'file_live',
          expire: async (nowMs) => {
            expiredSeen.push(nowMs);
            return 3;
          },
        },
      ],
    });
    expect(result).toEqual({ staleParts: 1, expired: 3, orphans: 1, unclaimed: 1 });
    expect(expiredSeen).toHaveLength(1);
    expect(readdirSync(join(root, 'prj_a')).sort()).toEqual(['file_live', 'file_young']);
    expect(readdirSync(join(root, 'prj_b'))).toEqual(['other_thing']);
    expect(readdirSync(join(root, '.tmp'))).toEqual(['in-progress.part']);
  });
});
