/**
 * Builds the configured object store (the only place an object store adapter is chosen): the local
 * folder at objects.path, or `{data_dir}/objects` (objects.kind local, the default), or an
 * S3-compatible bucket (objects.kind s3, objects.s3). A sealing key named by objects.sealing_key_env
 * must be present and well formed when configured; a feature that needs sealing calls
 * requireSealing() at start-up, so the gateway refuses to start without one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { LocalFolderObjectStore } from './local-folder.js';
import type { ObjectStore } from './port.js';
import { S3BucketObjectStore, type S3BucketOptions } from './s3-bucket.js';
import { parseSealingKey } from './sealing.js';

export function objectsFolder(config: Config): string {
  return resolve(config.objects.path ?? `${config.data_dir}/objects`);
}

/** The quick start's sealing key: 32 random bytes (hex) written once with mode 0600. */
function readOrCreateKeyFile(path: string): string {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  }
  return readFileSync(path, 'utf8').trim();
}

/**
 * The configured sealing key (objects.sealing_key_env, else objects.sealing_key_file), or undefined.
 * Objects are sealed with it, and so are webhook signing secrets in the store (webhooks/secret-box.ts).
 */
export function readSealingKey(config: Config, environment: NodeJS.ProcessEnv): Buffer | undefined {
  const variable = config.objects.sealing_key_env;
  let sealingKey: Buffer | undefined;
  if (variable !== undefined) {
    const text = environment[variable];
    if (text === undefined || text === '') {
      throw new Error(`objects.sealing_key_env: environment variable ${variable} is not set`);
    }
    sealingKey = parseSealingKey(text, `objects.sealing_key_env (${variable})`);
  } else if (config.objects.sealing_key_file !== undefined) {
    sealingKey = parseSealingKey(
      readOrCreateKeyFile(resolve(config.objects.sealing_key_file)),
      'objects.sealing_key_file',
    );
  }
  return sealingKey;
}

export function openObjectStore(config: Config, environment: NodeJS.ProcessEnv): ObjectStore {
  const sealingKey = readSealingKey(config, environment);
  const sealing = sealingKey ? { sealingKey } : {};
  const kind = config.objects.kind;
  switch (kind) {
    case 'local':
      return new LocalFolderObjectStore({ root: objectsFolder(config), ...sealing });
    case 's3':
      return new S3BucketObjectStore({ ...s3Settings(config, environment), ...sealing });
    default: {
      const never: never = kind;
      throw new Error(`unknown object store ${String(never)}`);
    }
  }
}

/** objects.s3 as adapter options; credentials from the named variables, else the SDK's default chain. */
function s3Settings(config: Config, environment: NodeJS.ProcessEnv): Omit<S3BucketOptions, 'sealingKey'> {
  const s3 = config.objects.s3;
  if (!s3) throw new Error('objects.s3: required when objects.kind is s3');
  const read = (field: string, name: string | undefined): string | undefined => {
    if (name === undefined) return undefined;
    const value = environment[name];
    if (!value) throw new Error(`objects.s3.${field}: environment variable ${name} is not set`);
    return value;
  };
  const accessKeyId = read('access_key_id_env', s3.access_key_id_env);
  const secretAccessKey = read('secret_access_key_env', s3.secret_access_key_env);
  const sessionToken = read('session_token_env', s3.session_token_env);
  return {
    bucket: s3.bucket,
    prefix: s3.prefix,
    partSizeBytes: s3.part_size_bytes,
    checksumAlgorithm: s3.checksum_algorithm,
    client: {
      region: s3.region,
      forcePathStyle: s3.force_path_style,
      ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
      ...(accessKeyId && secretAccessKey
        ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
        : {}),
    },
  };
}
