/** Picks the store adapter the configuration names. The only place an adapter is chosen. */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/port.js';
import type { LedgerLane } from '../store/postgres/pool.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';

export interface OpenStoreOptions {
  /** SQLite: take the one-writer lock (true for the gateway, false for short CLI commands). */
  exclusive: boolean;
  /** Where the store's own warnings go (PostgreSQL: a failed idle connection, a ledger batch written item by item). */
  logger?: Logger;
}

/**
 * What a log line says of a PostgreSQL error: its message and the server's code and severity. Not
 * the error itself: pg-pool hangs the failed client on it (`error.client`), whose connection
 * parameters hold the password of a URL that carries one.
 */
function databaseError(error: unknown): { message: string; code?: string; severity?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return {
    message: error.message,
    ...(typeof code === 'string' && { code }),
    ...(typeof severity === 'string' && { severity }),
  };
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
      const logger = options.logger;
      return new PostgresStore({
        connectionString,
        poolMax: settings.postgres.pool_max,
        connectTimeoutMs: settings.postgres.connect_timeout_ms,
        statementTimeoutMs: settings.postgres.statement_timeout_ms,
        ...(logger && {
          onIdleError: (error: Error) =>
            logger.warn(
              { error: databaseError(error) },
              'store: an idle PostgreSQL connection failed; the pool discarded it and opens another when needed',
            ),
          onLedgerFallback: (lane: LedgerLane, error: unknown) =>
            logger.warn(
              { error: databaseError(error), lane },
              'store: a ledger batch failed as one statement and was written item by item',
            ),
        }),
      });
    }
    default: {
      const never: never = settings.kind;
      throw new Error(`unknown store ${String(never)}`);
    }
  }
}
