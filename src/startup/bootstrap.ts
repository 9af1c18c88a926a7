/**
 * Start-up work before the listener opens: migrations, Outcome Definitions and configured keys
 * synced into the store, and the quick-start key (generated once, kept in a 0600 file).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/schema.js';
import { SCOPES } from '../config/schema.js';
import { hashSecret, KEY_SECRET_PATTERN, newKeySecret } from '../lib/secrets.js';
import type { Store } from '../store/port.js';

export const QUICKSTART_KEY_ID = 'key_quickstart';

export async function bootstrapStore(
  store: Store,
  config: Config,
  environment: NodeJS.ProcessEnv,
): Promise<void> {
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
}

/** Returns the quick-start key's secret, creating it (and its file) on first start. */
export async function ensureQuickstartKey(store: Store, keyFile: string, projectId: string): Promise<string> {
  let secret = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '';
  if (!KEY_SECRET_PATTERN.test(secret)) {
    secret = newKeySecret();
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, `${secret}\n`, { mode: 0o600 });
  }
  await store.upsertConfiguredKey({
    id: QUICKSTART_KEY_ID,
    projectId,
    secretHash: hashSecret(secret),
    scopes: [...SCOPES],
    label: 'quick start',
    createdAt: new Date().toISOString(),
  });
  return secret;
}
