/**
 * PostgreSQL for tests: a throw-away database per test (created from the server's template,
 * dropped WITH (FORCE)), and describePostgres, which runs a suite only when a server answers.
 * Under CI=true the suite always runs: a missing server fails loudly instead of being skipped.
 * Server: postgres://postgres@127.0.0.1:5432/postgres, or the URL in SVC_TEST_POSTGRES_URL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';

const ADMIN_URL = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REQUIRED = process.env.CI === 'true';

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

/** describe() for suites that need PostgreSQL (see the header for when they run). */
export function describePostgres(name: string, suite: () => void): void {
  if (postgresAvailable) {
    describe(name, suite);
    return;
  }
  const where = `PostgreSQL at ${new URL(ADMIN_URL).host}`;
  if (REQUIRED) {
    describe(name, () => {
      it('needs PostgreSQL (CI=true: these tests may not be skipped)', () => {
        throw new Error(
          `${where} is not reachable, and CI=true requires the PostgreSQL tests to run. ` +
            'Start PostgreSQL at 127.0.0.1:5432 (user postgres, trust auth) or set SVC_TEST_POSTGRES_URL.',
        );
      });
    });
    return;
  }
  console.warn(
    `[${name}] skipped: ${where} is not reachable. To run these tests, start PostgreSQL at 127.0.0.1:5432 ` +
      '(user postgres, trust auth) or set SVC_TEST_POSTGRES_URL=postgres://user@host:port/postgres. Under CI=true they fail instead.',
  );
  describe.skip(name, suite);
}
