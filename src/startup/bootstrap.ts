/**
 * Start-up work before the listener opens: migrations, Outcome Definitions and configured keys
 * synced into the store, configured webhook endpoints synced (webhooks/configured-endpoints.ts), and
 * the quick-start key.
 *
 * Revocation is final (docs/decisions.md, "Authentication and keys"): a configured key is inserted when absent and
 * its project, secret hash, scopes and label follow the configuration, but a revoked one stays
 * revoked across restarts and CLI commands; start-up reports it (id only). The quick-start key is
 * created once per store: the first process to insert it writes the key file; every later start,
 * on this or another replica, only reads the file back and never replaces the stored hash.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/schema.js';
import { SCOPES } from '../config/schema.js';
import { hashSecret, KEY_SECRET_PATTERN, newKeySecret } from '../lib/secrets.js';
import { readSealingKey } from '../objects/open-objects.js';
import type { Store } from '../store/port.js';
import { syncConfiguredEndpoints } from '../webhooks/configured-endpoints.js';
import { SecretBox } from '../webhooks/secret-box.js';

export const QUICKSTART_KEY_ID = 'key_quickstart';

/** How long a replica that lost the race to create the quick-start key waits for the winner's file. */
const KEY_FILE_WAIT_MS = 2000;

export interface BootstrapReport {
  /** Ids of configured keys that are revoked in the store (they stay revoked). */
  revokedConfiguredKeys: string[];
}

export async function bootstrapStore(
  store: Store,
  config: Config,
  environment: NodeJS.ProcessEnv,
): Promise<BootstrapReport> {
  await store.migrate();
  await store.syncDefinitions(
    config.projects.flatMap((project) =>
      project.outcome_definitions.map((definition) => ({
        projectId: project.id,
        id: definition.id,
        version: definition.version,
        kind: definition.kind,
        allowedValues: definition.kind === 'BOOLEAN' ? [true, false] : (definition.allowed_values ?? []),
        enabled: definition.enabled,
      })),
    ),
  );
  const createdAt = new Date().toISOString();
  for (const key of config.keys) {
    await store.upsertConfiguredKey({
      id: key.id,
      projectId: key.project,
      secretHash: hashSecret(environment[key.secret_env]!),
      scopes: key.scopes,
      label: key.label ?? null,
      createdAt,
    });
  }
  await syncConfiguredEndpoints(
    store,
    config,
    environment,
    new SecretBox(readSealingKey(config, environment)),
    Date.now(),
  );
  const configured = new Set(config.keys.map((key) => key.id));
  const stored = config.keys.length === 0 ? [] : await store.listKeys();
  return {
    revokedConfiguredKeys: stored
      .filter((key) => configured.has(key.id) && key.revokedAt !== null)
      .map((key) => key.id),
  };
}

export interface QuickstartKey {
  /** The working secret, when this process can know it (created here or read back from the file). */
  secret: string | undefined;
  /** Why the quick-start key cannot be used from this process, for a start-up warning. */
  problem: string | undefined;
}

function readSecret(keyFile: string): string | undefined {
  const secret = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '';
  return KEY_SECRET_PATTERN.test(secret) ? secret : undefined;
}

/** Written to a temporary name and renamed, so a replica reading it never sees half a key. */
function writeSecret(keyFile: string, secret: string): void {
  mkdirSync(dirname(keyFile), { recursive: true });
  const temporary = `${keyFile}.${process.pid}.tmp`;
  writeFileSync(temporary, `${secret}\n`, { mode: 0o600 });
  renameSync(temporary, keyFile);
}

async function readBack(store: Store, keyFile: string): Promise<string | undefined> {
  const deadline = Date.now() + KEY_FILE_WAIT_MS;
  for (;;) {
    const secret = readSecret(keyFile);
    if (secret !== undefined && (await store.findKeyByHash(hashSecret(secret)))?.id === QUICKSTART_KEY_ID)
      return secret;
    if (Date.now() >= deadline) return undefined;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The quick-start key: created (with its 0600 file) by the first start on a store, read back afterwards. */
export async function ensureQuickstartKey(
  store: Store,
  keyFile: string,
  projectId: string,
): Promise<QuickstartKey> {
  const fromFile = readSecret(keyFile);
  const candidate = fromFile ?? newKeySecret();
  const created = await store.insertKeyIfAbsent({
    id: QUICKSTART_KEY_ID,
    projectId,
    secretHash: hashSecret(candidate),
    scopes: [...SCOPES],
    label: 'quick start',
    createdAt: new Date().toISOString(),
  });
  if (created) {
    if (fromFile === undefined) writeSecret(keyFile, candidate);
    return { secret: candidate, problem: undefined };
  }
  const secret = await readBack(store, keyFile);
  if (secret === undefined)
    return {
      secret: undefined,
      problem: `the quick-start key ${QUICKSTART_KEY_ID} exists in the store but ${keyFile} does not hold its secret (it is in the key file of the process that created it); it is not replaced`,
    };
  const record = await store.findKeyByHash(hashSecret(secret));
  if (record?.revokedAt)
    return {
      secret: undefined,
      problem: `the quick-start key ${QUICKSTART_KEY_ID} is revoked; it stays revoked`,
    };
  return { secret, problem: undefined };
}
