/**
 * An object store on an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...), `{prefix}{projectId}/{key}`.
 *
 * put: the framed body (framed-body.ts: sealed with AES-256-GCM here, before any byte leaves) is cut
 * into parts of `partSizeBytes`. A body that fits one part is one PutObject; a longer one is a
 * multipart upload (create -> upload parts -> complete), aborted when anything fails. Both are
 * atomic on S3: readers see no object or the complete one. Every request carries a checksum
 * (ChecksumAlgorithm, CRC32 by default) that servers supporting flexible checksums verify; bodies
 * are buffers, so the checksum travels as a header (no aws-chunked trailer older servers misread).
 * A process killed mid-upload leaves an incomplete multipart upload, which removeStaleParts()
 * aborts (and a bucket lifecycle rule AbortIncompleteMultipartUpload should also cover).
 *
 * get: plain objects stream through; sealed ones are read whole and verified before any byte is
 * handed out (as in the local folder). delete answers whether the object existed (HEAD first).
 *
 * An exchange that fails because the bucket is unavailable for now (connection refused, reset or
 * timed out, a 5xx, 429, SlowDown and the other throttling errors), after the SDK's own retries
 * (maxAttempts, 3 by default), throws ObjectStoreUnavailableError: every caller answers 503 with
 * Retry-After. Other errors (403, a bad bucket name) pass unchanged.
 */
import { Readable } from 'node:stream';
import type {
  ChecksumAlgorithm,
  ListMultipartUploadsCommandOutput,
  S3Client,
  S3ClientConfig,
} from '@aws-sdk/client-s3';
import { ObjectStoreUnavailableError } from '../errors/gateway-error.js';
import { framedBody } from './framed-body.js';
import { illegalName, KEY_PATTERN, PROJECT_PATTERN, sealingRequired, validName } from './object-names.js';
import type { ObjectStore, PutOptions, PutResult, StoredObject } from './port.js';
import { framingOf, HEADER_BYTES, openSealed } from './sealing.js';

export interface S3BucketOptions {
  bucket: string;
  /** Prepended to every key, e.g. `svc/`; '' uses the bucket's root. */
  prefix: string;
  /** The S3 client settings (endpoint, region, forcePathStyle, credentials). */
  client: S3ClientConfig;
  /** Multipart part size; S3 needs at least 5 MiB for every part but the last. */
  partSizeBytes: number;
  checksumAlgorithm: ChecksumAlgorithm;
  sealingKey?: Buffer;
}

interface UploadedPart {
  PartNumber: number;
  ETag: string | undefined;
  ChecksumCRC32?: string;
  ChecksumCRC32C?: string;
  ChecksumSHA1?: string;
  ChecksumSHA256?: string;
}

type Sdk = typeof import('@aws-sdk/client-s3');
let sdkLoading: Promise<Sdk> | undefined;
/** The SDK loads on first use, so commands that never touch a bucket do not pay for it. */
const loadSdk = (): Promise<Sdk> => {
  sdkLoading ??= import('@aws-sdk/client-s3');
  return sdkLoading;
};

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** Socket-level failures: the endpoint is down, unreachable or dropped the connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
]);
/** Statuses that pass (501 Not Implemented does not: the server lacks the feature). */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);
/** S3 error names (and the SDK's own) that say: not now, retry later. */
const RETRYABLE_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestLimitExceeded',
  'ServiceUnavailable',
  'InternalError',
]);

/** Whether `error` says the bucket is unavailable for now (rather than that the request is wrong). */
function isUnavailable(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const status = statusOf(error);
  if (status !== undefined && RETRYABLE_STATUSES.has(status)) return true;
  const { code, name, errors } = error as { code?: unknown; name?: unknown; errors?: unknown };
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  if (typeof name === 'string' && RETRYABLE_NAMES.has(name)) return true;
  // Node's connection attempts over several addresses fail with an AggregateError.
  return Array.isArray(errors) && errors.some(isUnavailable);
}

/**
 * Runs one exchange with the bucket: an outage (isUnavailable) becomes ObjectStoreUnavailableError
 * (503 with Retry-After for every caller); any other error passes unchanged.
 */
async function reaching<T>(exchange: () => Promise<T>): Promise<T> {
  try {
    return await exchange();
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    const { name, code, message } = error as { name?: string; code?: string; message?: string };
    const status = statusOf(error);
    throw new ObjectStoreUnavailableError(
      `object store unavailable: ${[name, code, status, message].filter(Boolean).join(' ')}`,
      { cause: error },
    );
  }
}

/** Cuts a stream of chunks into buffers of exactly `size` bytes (the last one shorter). */
async function* partsOf(chunks: AsyncIterable<Buffer>, size: number): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of chunks) {
    pending.push(chunk);
    pendingBytes += chunk.length;
    while (pendingBytes >= size) {
      const joined = Buffer.concat(pending);
      yield joined.subarray(0, size);
      pending = [joined.subarray(size)];
      pendingBytes -= size;
    }
  }
  if (pendingBytes > 0 || pending.length === 0) yield Buffer.concat(pending);
}

async function* skipHeader(body: AsyncIterable<Uint8Array>): AsyncIterable<Buffer> {
  let skipped = 0;
  for await (const chunk of body) {
    const data = Buffer.from(chunk);
    if (skipped >= HEADER_BYTES) {
      yield data;
      continue;
    }
    const rest = data.subarray(HEADER_BYTES - skipped);
    skipped += Math.min(data.length, HEADER_BYTES - skipped);
    if (rest.length > 0) yield rest;
  }
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

export class S3BucketObjectStore implements ObjectStore {
  private connecting: Promise<{ sdk: Sdk; client: S3Client }> | undefined;
  private client: S3Client | undefined;

  constructor(private readonly options: S3BucketOptions) {}

  private connection(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.connecting ??= loadSdk().then((sdk) => {
      this.client = new sdk.S3Client({
        ...this.options.client,
        maxAttempts: this.options.client.maxAttempts ?? 3,
      });
      return { sdk, client: this.client };
    });
    return this.connecting;
  }

  requireSealing(feature: string): void {
    if (!this.options.sealingKey) throw sealingRequired(feature);
  }

  private keyOf(projectId: string, key: string): string {
    return `${this.options.prefix}${projectId}/${key}`;
  }

  async put(
    projectId: string,
    key: string,
    body: Readable | Buffer,
    options: PutOptions,
  ): Promise<PutResult> {
    const { sdk, client } = await this.connection();
    if (!validName(projectId, key)) throw illegalName(projectId, key);
    if (options.sealed) this.requireSealing('a sealed object');
    const framed = framedBody(body, options, { sealingKey: this.options.sealingKey, projectId, key });
    const parts = partsOf(framed.chunks, this.options.partSizeBytes)[Symbol.asyncIterator]();
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    const target = { Bucket: this.options.bucket, Key: this.keyOf(projectId, key) };
    const checksum = { ChecksumAlgorithm: this.options.checksumAlgorithm };
    if (second.done) {
      await reaching(() =>
        client.send(
          new sdk.PutObjectCommand({ ...target, ...checksum, Body: first.value ?? Buffer.alloc(0) }),
        ),
      );
      return framed.result();
    }
    const { UploadId } = await reaching(() =>
      client.send(new sdk.CreateMultipartUploadCommand({ ...target, ...checksum })),
    );
    try {
      const uploaded: UploadedPart[] = [];
      const upload = async (part: Buffer) => {
        const PartNumber = uploaded.length + 1;
        const answer = await reaching(() =>
          client.send(
            new sdk.UploadPartCommand({ ...target, ...checksum, UploadId, PartNumber, Body: part }),
          ),
        );
        uploaded.push({
          PartNumber,
          ETag: answer.ETag,
          ...(answer.ChecksumCRC32 ? { ChecksumCRC32: answer.ChecksumCRC32 } : {}),
          ...(answer.ChecksumCRC32C ? { ChecksumCRC32C: answer.ChecksumCRC32C } : {}),
          ...(answer.ChecksumSHA1 ? { ChecksumSHA1: answer.ChecksumSHA1 } : {}),
          ...(answer.ChecksumSHA256 ? { ChecksumSHA256: answer.ChecksumSHA256 } : {}),
        });
      };
      await upload(first.value!);
      await upload(second.value!);
      for (let next = await parts.next(); !next.done; next = await parts.next()) await upload(next.value);
      await reaching(() =>
        client.send(
          new sdk.CompleteMultipartUploadCommand({
            ...target,
            UploadId,
            MultipartUpload: { Parts: uploaded },
          }),
        ),
      );
      return framed.result();
    } catch (error) {
      await reaching(() => client.send(new sdk.AbortMultipartUploadCommand({ ...target, UploadId }))).catch(
        () => undefined,
      );
      throw error;
    }
  }

  async get(projectId: string, key: string): Promise<Readable | undefined> {
    const { sdk, client } = await this.connection();
    if (!validName(projectId, key)) return undefined;
    let body: AsyncIterable<Uint8Array>;
    try {
      const answer = await reaching(() =>
        client.send(
          new sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(projectId, key) }),
        ),
      );
      body = answer.Body as unknown as AsyncIterable<Uint8Array>;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
    const iterator = body[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let headBytes = 0;
    while (headBytes < HEADER_BYTES) {
      const next = await reaching(() => iterator.next());
      if (next.done) break;
      head.push(Buffer.from(next.value));
      headBytes += next.value.length;
    }
    const start = Buffer.concat(head);
    const rest: AsyncIterable<Uint8Array> = {
      async *[Symbol.asyncIterator]() {
        yield start;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      },
    };
    if (framingOf(start.subarray(0, HEADER_BYTES)) === 'plain') return Readable.from(skipHeader(rest));
    this.requireSealing('reading a sealed object');
    const sealed = await reaching(() => readAll(rest));
    return Readable.from([openSealed(sealed, this.options.sealingKey!, projectId, key)]);
  }

  async delete(projectId: string, key: string): Promise<boolean> {
    const { sdk, client } = await this.connection();
    if (!validName(projectId, key)) return false;
    const target = { Bucket: this.options.bucket, Key: this.keyOf(projectId, key) };
    try {
      await reaching(() => client.send(new sdk.HeadObjectCommand(target)));
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
    await reaching(() => client.send(new sdk.DeleteObjectCommand(target)));
    return true;
  }

  async *list(): AsyncIterable<StoredObject> {
    const { sdk, client } = await this.connection();
    let ContinuationToken: string | undefined;
    do {
      const page = await reaching(() =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.options.bucket,
            Prefix: this.options.prefix,
            ...(ContinuationToken ? { ContinuationToken } : {}),
          }),
        ),
      );
      for (const entry of page.Contents ?? []) {
        const [projectId, key, ...extra] = (entry.Key ?? '').slice(this.options.prefix.length).split('/');
        if (extra.length > 0 || !projectId || !key) continue;
        if (!PROJECT_PATTERN.test(projectId) || !KEY_PATTERN.test(key)) continue;
        yield {
          projectId,
          key,
          storedBytes: entry.Size ?? 0,
          modifiedMs: entry.LastModified?.getTime() ?? 0,
        };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** Aborts multipart uploads started longer ago than `olderThanMs` (killed writes). */
  async removeStaleParts(olderThanMs: number, nowMs: number = Date.now()): Promise<number> {
    const { sdk, client } = await this.connection();
    let uploads: ListMultipartUploadsCommandOutput;
    try {
      uploads = await reaching(() =>
        client.send(
          new sdk.ListMultipartUploadsCommand({ Bucket: this.options.bucket, Prefix: this.options.prefix }),
        ),
      );
    } catch (error) {
      // Some S3-compatible servers do not list uploads: the bucket's lifecycle rule is then the backstop.
      if (statusOf(error) === 501) return 0;
      throw error;
    }
    let removed = 0;
    for (const upload of uploads.Uploads ?? []) {
      if (!upload.Key || !upload.UploadId || !upload.Initiated) continue;
      if (nowMs - upload.Initiated.getTime() < olderThanMs) continue;
      await reaching(() =>
        client.send(
          new sdk.AbortMultipartUploadCommand({
            Bucket: this.options.bucket,
            Key: upload.Key,
            UploadId: upload.UploadId,
          }),
        ),
      );
      removed += 1;
    }
    return removed;
  }

  close(): void {
    this.client?.destroy();
  }
}
