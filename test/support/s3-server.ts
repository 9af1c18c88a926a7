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
  stop(): Promise<void>;
}

export async function startTestS3(bucket = 'svc-test'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
