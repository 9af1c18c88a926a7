/**
 * A gateway process killed (SIGKILL) in the middle of an upload leaves no half file: the partial
 * write is only ever a temporary part (never at an object's final path), no file record exists,
 * and the next sweep removes the part.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalFolderObjectStore } from '../../src/objects/local-folder.js';
import { sweepObjects } from '../../src/objects/sweep.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/crash-gateway.ts', import.meta.url));

interface Child {
  process: ChildProcess;
  url: string;
  dataDir: string;
  database: string;
  key: string;
}

async function startChild(): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`gateway child exited early (${String(code)})`)));
  });
  return { process: child, ...(JSON.parse(line) as Omit<Child, 'process'>) };
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a crash during an upload', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it('leaves no partial file at a final path, no record, and a part the sweep removes', async () => {
    const child = await startChild();
    cleanups.push(() => {
      child.process.kill('SIGKILL');
      rmSync(child.dataDir, { recursive: true, force: true });
    });
    const objectsRoot = join(child.dataDir, 'objects');
    const boundary = 'crash-boundary-0123456789';
    const upload = request(`${child.url}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${child.key}`,
        'idempotency-key': 'crash-1',
        'svc-route': 'store-only',
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    upload.on('error', () => {});
    upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`);
    upload.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    upload.write(Buffer.alloc(256 * 1024, 0x61));
    const parts = join(objectsRoot, '.tmp');
    await until(() => existsSync(parts) && readdirSync(parts).length === 1);
    child.process.kill('SIGKILL');
    await new Promise((resolve) => child.process.once('exit', resolve));
    upload.destroy();

    expect(readdirSync(parts)).toHaveLength(1);
    expect(existsSync(join(objectsRoot, 'prj_a'))).toBe(false);
    const database = new Database(child.database, { readonly: true });
    try {
      expect(database.prepare('SELECT COUNT(*) AS n FROM files').get()).toEqual({ n: 0 });
      expect(database.prepare('SELECT COUNT(*) AS n FROM idempotency').get()).toEqual({ n: 0 });
    } finally {
      database.close();
    }

    const result = await sweepObjects({
      objects: new LocalFolderObjectStore({ root: objectsRoot }),
      owners: [],
      nowMs: Date.now() + 60_000,
      graceMs: 1000,
    });
    expect(result.staleParts).toBe(1);
    expect(readdirSync(parts)).toEqual([]);
  });
});
