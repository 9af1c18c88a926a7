/**
 * SQLite migration 12: the events table, the outbox of docs/events.md. `sequence` is the global
 * delivery order; `dedupe_key` (NULL for events that happen once by nature) makes a threshold event
 * fire once: its insert is `INSERT OR IGNORE`. `data` is JSON text.
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
`,
};
