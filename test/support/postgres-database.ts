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

/** Runs `work` on a fresh connection to the server's admin database, closed afterwards. */
async function withAdmin(work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = adminClient();
  try {
    await client.connect();
    await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** How long drop() lets connections that are closing (a pool that was just ended) go on their own. */
const CLOSING_WAIT_MS = 2000;
const OPEN_CONNECTIONS = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1';

/**
 * Drops a test database. A pool's end() resolves before its connections' sockets have closed; a
 * FORCE drop in that moment terminates them, and a client that is ending has no error listener
 * left, so the termination would surface as an uncaught error in whichever test runs next. So the
 * drop first waits (briefly) for the database's connections to go away, then forces out whatever
 * a test left open.
 */
function dropDatabase(name: string): Promise<void> {
  return withAdmin(async (client) => {
    const deadline = Date.now() + CLOSING_WAIT_MS;
    while (Date.now() < deadline) {
      const open = await client.query(OPEN_CONNECTIONS, [name]);
      if (open.rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/** Creates svc_test_<random> on the test server; drop() removes it even with connections open. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => dropDatabase(name),
  };
}
