/**
 * SQLite migration 7 (issue 13): Gateway Keys managed over the API (expiry, allowed model aliases,
 * limits) and the spend counters of Project and key caps (money/spend-caps.ts).
 * - gateway_keys.models: JSON array of model aliases, NULL = every alias.
 * - gateway_keys.limits: JSON object (spend caps), NULL = none.
 * - spend_counters: one row per (scope, owner, period), period `lifetime`, `YYYY-MM-DD` or `YYYY-MM`.
 * - attempts.cap_counters: JSON array of the counters the reservation was admitted on, so its
 *   settlement commits/releases on exactly those, even after a window rolled over.
 */
export const SQLITE_MIGRATION_KEYS_CAPS = {
  version: 7,
  name: 'managed keys and spend caps',
  sql: `
ALTER TABLE gateway_keys ADD COLUMN expires_at TEXT;
ALTER TABLE gateway_keys ADD COLUMN models TEXT;
ALTER TABLE gateway_keys ADD COLUMN limits TEXT;
ALTER TABLE attempts ADD COLUMN cap_counters TEXT;

CREATE TABLE spend_counters (
  scope TEXT NOT NULL CHECK (scope IN ('project', 'key')),
  owner_id TEXT NOT NULL,
  period TEXT NOT NULL,
  committed INTEGER NOT NULL DEFAULT 0 CHECK (committed >= 0),
  reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  PRIMARY KEY (scope, owner_id, period)
);
`,
} as const;
