/**
 * PostgreSQL test databases without vitest (so benchmarks and scripts can use them too): a
 * throw-away database per test, created from the server's template and dropped WITH (FORCE).
 * Server: postgres://postgres@127.0.0.1:5432/postgres, or the URL in SVC_TEST_POSTGRES_URL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function adminClient(connectTimeoutMs = 5000): pg.Client {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => {});
  return client;
}

async function probe(): Promise<boolean> {
  const client = adminClient(1500);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const postgresAvailable: boolean = await probe();

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin(sql: string): Promise<void> {
  const client = adminClient();
  try {
    await client.connect();
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates svc_test_<random> on the test server; drop() removes it even with connections open. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
