/**
 * Applies POSTGRES_MIGRATIONS. Replicas starting at once serialise on a session advisory lock (held
 * by one dedicated connection, released at the end or when that connection dies), so exactly one
 * applies each migration and the others find it recorded in schema_migrations. Each migration and
 * its record commit together (PostgreSQL DDL is transactional). The connection is not the pool's:
 * waiting for another replica's migration and long DDL need longer bounds than ordinary operations.
 */
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/** Arbitrary constant naming the "svc gateway schema" lock (advisory locks are per database). */
const MIGRATION_LOCK = 0x5356_4301;

export interface MigrationConnection {
  connectionString: string;
  connectTimeoutMs: number;
}

export async function migrate(connection: MigrationConnection): Promise<void> {
  const client = new pg.Client({
    connectionString: connection.connectionString,
    connectionTimeoutMillis: connection.connectTimeoutMs,
    application_name: 'svc-gateway-migrate',
    lock_timeout: 60_000,
    statement_timeout: 300_000,
    query_timeout: 310_000,
  });
  // A server restart while migrating surfaces through the pending query; this keeps it from
  // also being an unhandled 'error' event.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)',
    );
    const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(applied.rows.map((row) => row.version));
    for (const migration of POSTGRES_MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())',
          [migration.version, migration.name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
  } finally {
    // Ending the session releases the advisory lock.
    await client.end().catch(() => undefined);
  }
}
