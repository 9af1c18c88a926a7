/**
 * Both adapters tell an outage (ObjectStoreUnavailableError: 503 with Retry-After for every caller)
 * from a request the store refuses for good: an S3 endpoint that answers SlowDown, 500 or 503, or
 * that refuses connections, against one that answers 403; a local folder on a full volume (a small
 * tmpfs, mounted when the test may mount one).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStoreUnavailableError } from '../errors/gateway-error.js';
import { LocalFolderObjectStore } from './local-folder.js';
import { S3BucketObjectStore } from './s3-bucket.js';

/** An S3 endpoint on loopback that answers every request with `status` and an S3 error `code`. */
async function answering(status: number, code: string): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(status, { 'content-type': 'application/xml' });
      response.end(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`,
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

function bucketAt(endpoint: string): S3BucketObjectStore {
  return new S3BucketObjectStore({
    bucket: 'svc-test',
    prefix: '',
    partSizeBytes: 5 * 1024 * 1024,
    checksumAlgorithm: 'CRC32',
    client: {
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    },
  });
}

describe('S3 bucket: outage or refusal', () => {
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  for (const [status, code] of [
    [503, 'SlowDown'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ] as const) {
    it(`${status} ${code}: put, get and delete throw ObjectStoreUnavailableError`, async () => {
      const { url, server } = await answering(status, code);
      servers.push(server);
      const objects = bucketAt(url);
      const put = await objects
        .put('prj_a', 'k1', Buffer.from('x'), { sealed: false })
        .catch((error) => error);
      expect(put).toBeInstanceOf(ObjectStoreUnavailableError);
      expect(put.message).toContain(String(status));
      expect(await objects.get('prj_a', 'k1').catch((error) => error)).toBeInstanceOf(
        ObjectStoreUnavailableError,
      );
      expect(await objects.delete('prj_a', 'k1').catch((error) => error)).toBeInstanceOf(
        ObjectStoreUnavailableError,
      );
      objects.close();
    });
  }

  it('403 AccessDenied passes unchanged (a configuration to fix, not an outage)', async () => {
    const { url, server } = await answering(403, 'AccessDenied');
    servers.push(server);
    const objects = bucketAt(url);
    const put = await objects.put('prj_a', 'k1', Buffer.from('x'), { sealed: false }).catch((error) => error);
    expect(put).toBeInstanceOf(Error);
    expect(put).not.toBeInstanceOf(ObjectStoreUnavailableError);
    objects.close();
  });

  it('a refused connection throws ObjectStoreUnavailableError', async () => {
    const { url, server } = await answering(200, 'none');
    await new Promise((done) => server.close(done));
    const objects = bucketAt(url);
    const put = await objects.put('prj_a', 'k1', Buffer.from('x'), { sealed: false }).catch((error) => error);
    expect(put).toBeInstanceOf(ObjectStoreUnavailableError);
    expect(put.message).toMatch(/ECONNREFUSED/);
    objects.close();
  });
});

/** A 64 KiB tmpfs: only root (or a container allowed to mount) can make one. */
function mountSmallVolume(): { path: string; unmount(): void } | undefined {
  const path = mkdtempSync(join(tmpdir(), 'svc-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', path], { stdio: 'ignore' });
  if (mounted.status !== 0) {
    rmSync(path, { recursive: true, force: true });
    return undefined;
  }
  return {
    path,
    unmount() {
      spawnSync('umount', [path], { stdio: 'ignore' });
      rmSync(path, { recursive: true, force: true });
    },
  };
}

const volume = mountSmallVolume();
if (!volume) console.warn('[local folder on a full volume] skipped: this process may not mount a tmpfs.');

describe.skipIf(!volume)('local folder on a full volume', () => {
  afterAll(() => volume?.unmount());
  beforeAll(() => mkdirSync(join(volume!.path, 'objects')));

  it('ENOSPC throws ObjectStoreUnavailableError and leaves no part behind; a write fits again once space is freed', async () => {
    const objects = new LocalFolderObjectStore({ root: join(volume!.path, 'objects') });
    const full = await objects
      .put('prj_a', 'big', Buffer.alloc(256 * 1024, 1), { sealed: false })
      .catch((error) => error);
    expect(full).toBeInstanceOf(ObjectStoreUnavailableError);
    expect(full.message).toMatch(/ENOSPC/);
    expect(await objects.removeStaleParts(0)).toBe(0);
    await expect(
      objects.put('prj_a', 'small', Buffer.from('fits'), { sealed: false }),
    ).resolves.toMatchObject({
      bytes: 4,
    });
  });
});
