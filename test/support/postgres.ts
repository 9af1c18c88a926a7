/**
 * PostgreSQL for tests: a throw-away database per test (created from the server's template,
 * dropped WITH (FORCE)), and describePostgres, which runs a suite only when a server answers.
 * Under CI=true the suite always runs: a missing server fails loudly instead of being skipped.
 * Server: postgres://postgres@127.0.0.1:5432/postgres, or the URL in SVC_TEST_POSTGRES_URL.
 */
import { describe, it } from 'vitest';
import { ADMIN_URL, postgresAvailable } from './postgres-database.js';

export { createTestDatabase, postgresAvailable, type TestDatabase } from './postgres-database.js';

const REQUIRED = process.env.CI === 'true';

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
