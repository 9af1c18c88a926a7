/** PostgreSQL migration 4: token buckets of the shared limiter (limits/limiter.ts). */
export const POSTGRES_MIGRATION_RATE_BUCKETS = {
  version: 5,
  name: 'rate buckets',
  sql: `
CREATE TABLE rate_buckets (
  bucket_key TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  updated_ms BIGINT NOT NULL
);
`,
};
