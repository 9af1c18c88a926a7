/**
 * Builds the configured object store (the only place an object store adapter is chosen): the local
 * folder at objects.path, or `{data_dir}/objects`. A sealing key named by objects.sealing_key_env
 * must be present and well formed when configured; a feature that needs sealing calls
 * requireSealing() at start-up, so the gateway refuses to start without one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { LocalFolderObjectStore } from './local-folder.js';
import type { ObjectStore } from './port.js';
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

export function openObjectStore(config: Config, environment: NodeJS.ProcessEnv): ObjectStore {
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
  return new LocalFolderObjectStore({ root: objectsFolder(config), ...(sealingKey ? { sealingKey } : {}) });
}
