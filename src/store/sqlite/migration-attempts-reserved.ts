/**
 * SQLite migration 8: the index of open attempts holds only the reserved ones, as on PostgreSQL
 * (`attempts_open ... WHERE state = 'reserved'`). The old index kept an entry for every attempt
 * ever made and moved it at each settlement (delete under 'reserved', insert under the new state);
 * the reaper, its only reader, asks for reserved attempts alone. Now a settlement deletes one
 * entry, and the index stays as small as the number of calls in flight.
 */
export const SQLITE_MIGRATION_ATTEMPTS_RESERVED = {
  version: 8,
  name: 'partial index of reserved attempts',
  sql: `
DROP INDEX attempts_open;
CREATE INDEX attempts_open ON attempts(lease_expires_at) WHERE state = 'reserved';
`,
};
