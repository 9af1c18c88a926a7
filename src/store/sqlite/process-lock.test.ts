import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireProcessLock } from './process-lock.js';

let folder = '';
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'svc-lock-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function tryFromAnotherProcess(path: string): { status: number | null; output: string } {
  const module = JSON.stringify(new URL('./process-lock.ts', import.meta.url).pathname);
  const program = `(async () => { const m = await import(${module}); try { m.acquireProcessLock(${JSON.stringify(path)}); process.exit(0); } catch (e) { console.error(e.message); process.exit(2); } })()`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '-e', program], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('process lock', () => {
  it('refuses a second holder in another process and names the owner', () => {
    const path = join(folder, 'a.db.lock');
    const lock = acquireProcessLock(path);
    const other = tryFromAnotherProcess(path);
    expect(other.status).toBe(2);
    expect(other.output).toContain(`in use by process ${process.pid}`);
    lock.release();
    expect(tryFromAnotherProcess(path).status).toBe(0);
  });

  it('refuses a second holder in the same process', () => {
    const path = join(folder, 'b.db.lock');
    const lock = acquireProcessLock(path);
    expect(() => acquireProcessLock(path)).toThrow(/in use/);
    lock.release();
    acquireProcessLock(path).release();
  });
});
