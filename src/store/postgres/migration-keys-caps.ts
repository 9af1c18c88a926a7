/**
 * PostgreSQL migration 7 (issue 13): Gateway Keys managed over the API (expiry, allowed model
 * aliases, limits) and the spend counters of Project and key caps (money/spend-caps.ts).
 * - gateway_keys.models: JSONB array of model aliases, NULL = every alias.
 * - gateway_keys.limits: JSONB object (spend caps), NULL = none.
 * - spend_counters: one row per (scope, owner, period), period `lifetime`, `YYYY-MM-DD` or `YYYY-MM`.
 *   Admission is a conditional UPDATE on these rows (the limit travels with the statement), so
 *   replicas serialise on the row lock exactly as they do on a Run.
 * - attempts.cap_counters: JSONB array of the counters the reservation was admitted on.
 */
export const POSTGRES_MIGRATION_KEYS_CAPS = {
  version: 7,
  name: 'managed keys and spend caps',
  sql: `
ALTER TABLE gateway_keys ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE gateway_keys ADD COLUMN models JSONB;
ALTER TABLE gateway_keys ADD COLUMN limits JSONB;
ALTER TABLE attempts ADD COLUMN cap_counters JSONB;

CREATE TABLE spend_counters (
  scope TEXT NOT NULL CHECK (scope IN ('project', 'key')),
  owner_id TEXT NOT NULL,
  period TEXT NOT NULL,
  committed BIGINT NOT NULL DEFAULT 0 CHECK (committed >= 0),
  reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  PRIMARY KEY (scope, owner_id, period)
);
`,
} as const;
