/** Picks the store adapter the configuration names. The only place an adapter is chosen. */
import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/port.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';

export interface OpenStoreOptions {
  /** SQLite: take the one-writer lock (true for the gateway, false for short CLI commands). */
  exclusive: boolean;
}

export async function openStore(
  config: Config,
  environment: NodeJS.ProcessEnv,
  options: OpenStoreOptions = { exclusive: true },
): Promise<Store> {
  const settings = config.store;
  switch (settings.kind) {
    case 'sqlite':
      return new SqliteStore({
        path: resolve(settings.sqlite.path),
        synchronous: settings.sqlite.synchronous,
        exclusive: options.exclusive,
      });
    case 'postgres': {
      const connectionString = environment[settings.postgres.url_env];
      if (!connectionString)
        throw new Error(`store: environment variable ${settings.postgres.url_env} is not set`);
      const { PostgresStore } = await import('../store/postgres/postgres-store.js');
      return new PostgresStore({
        connectionString,
        poolMax: settings.postgres.pool_max,
        connectTimeoutMs: settings.postgres.connect_timeout_ms,
        statementTimeoutMs: settings.postgres.statement_timeout_ms,
      });
    }
    default: {
      const never: never = settings.kind;
      throw new Error(`unknown store ${String(never)}`);
    }
  }
}
