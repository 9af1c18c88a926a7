/** The object-store contract on both adapters: a local folder, and an S3 bucket on s3rver (loopback). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { startTestS3, type TestS3 } from '../../test/support/s3-server.js';
import { describeObjectStoreContract } from './contract/object-store-contract.js';
import { LocalFolderObjectStore } from './local-folder.js';
import { S3BucketObjectStore } from './s3-bucket.js';

const root = mkdtempSync(join(tmpdir(), 'svc-objects-contract-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeObjectStoreContract('local folder', () => ({
  open: (sealingKey) => new LocalFolderObjectStore({ root, ...(sealingKey ? { sealingKey } : {}) }),
  raw: {
    read: async (projectId, key) => readFileSync(join(root, projectId, key)),
    write: async (projectId, key, stored) => {
      mkdirSync(join(root, projectId), { recursive: true });
      writeFileSync(join(root, projectId, key), stored);
    },
  },
  largeBytes: 256 * 1024,
}));

let s3: TestS3;
let raw: S3Client;
const PREFIX = 'svc/';
beforeAll(async () => {
  s3 = await startTestS3();
  raw = new S3Client(clientSettings());
});
afterAll(async () => {
  raw?.destroy();
  await s3?.stop();
});

function clientSettings() {
  return {
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  };
}

// Parts of 5 MiB (S3's minimum): the large case uploads three parts.
const PART = 5 * 1024 * 1024;
describeObjectStoreContract('S3 bucket (s3rver)', () => ({
  open: (sealingKey) =>
    new S3BucketObjectStore({
      bucket: s3.bucket,
      prefix: PREFIX,
      client: clientSettings(),
      partSizeBytes: PART,
      checksumAlgorithm: 'CRC32',
      ...(sealingKey ? { sealingKey } : {}),
    }),
  raw: {
    read: async (projectId, key) => {
      const answer = await raw.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${projectId}/${key}` }),
      );
      return Buffer.from(await answer.Body!.transformToByteArray());
    },
    write: async (projectId, key, stored) => {
      await raw.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${projectId}/${key}`, Body: stored }),
      );
    },
  },
  largeBytes: PART,
}));
