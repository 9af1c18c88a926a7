/**
 * SQLite migration 12: the events table, the outbox of docs/events.md. `sequence` is the global
 * delivery order; `dedupe_key` (NULL for events that happen once by nature) makes a threshold event
 * fire once: its insert is `ON CONFLICT DO NOTHING`. `data` is JSON text. `expiry_noted` on Runs
 * and keys marks the ones whose expiry the events sweep has written (run.expired, key.expired), so
 * each pass reads only the newly expired through the partial indexes.
 */
export const SQLITE_MIGRATION_EVENTS = {
  version: 12,
  name: 'events',
  sql: `
CREATE TABLE events (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL,
  type TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  dedupe_key TEXT UNIQUE,
  occurred_at TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX events_by_project ON events(project_id, sequence);
CREATE INDEX events_by_time ON events(occurred_at);
ALTER TABLE runs ADD COLUMN expiry_noted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_expiry_pending ON runs(expires_at) WHERE status = 'active' AND expiry_noted = 0;
ALTER TABLE gateway_keys ADD COLUMN expiry_noted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX keys_expiry_pending ON gateway_keys(expires_at)
  WHERE expires_at IS NOT NULL AND revoked_at IS NULL AND expiry_noted = 0;
`,
};
