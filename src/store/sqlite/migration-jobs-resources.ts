/** SQLite migration 3: jobs with leases, batches, deferred responses. Times are epoch milliseconds. */
export const SQLITE_MIGRATION_JOBS_RESOURCES = {
  version: 3,
  name: 'jobs, batches and deferred responses',
  sql: `
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
  run_after INTEGER NOT NULL,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_due ON jobs(state, run_after);

CREATE TABLE batches (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  status TEXT NOT NULL,
  delete_after INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX batches_delete_after ON batches(delete_after);

CREATE TABLE deferred_responses (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  status TEXT NOT NULL,
  reap_at INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX deferred_responses_reap ON deferred_responses(reap_at);
`,
} as const;
