/**
 * A real S3-protocol server on loopback for tests: s3rver (a devDependency, so it always runs, CI
 * included) on port 0 with a temporary folder and one bucket. Path-style addressing, any
 * credentials (s3rver accepts S3RVER/S3RVER).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** An outage: the server stops listening and drops every open connection; its objects stay. */
  down(): Promise<void>;
  /** Back on the same port with the same objects. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestS3(bucket = 'svc-test'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  let port = 0;
  let server: S3rver | undefined;
  const up = async () => {
    const started = new S3rver({
      port,
      address: '127.0.0.1',
      silent: true,
      directory,
      configureBuckets: [{ name: bucket, configs: [] }],
    });
    port = ((await started.run()) as { port: number }).port;
    server = started;
  };
  const down = async () => {
    const running = server;
    server = undefined;
    if (!running) return;
    const closing = running.close();
    running.httpServer.closeAllConnections();
    await closing;
  };
  await up();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    down,
    up,
    async stop() {
      await down();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
