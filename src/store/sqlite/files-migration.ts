/** SQLite migration 2: file metadata (the content is in the object store). */
export const SQLITE_FILES_MIGRATION = {
  version: 2,
  name: 'files',
  sql: `
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  key_id TEXT,
  connection TEXT NOT NULL,
  filename TEXT NOT NULL,
  purpose TEXT NOT NULL,
  bytes INTEGER NOT NULL CHECK (bytes >= 0),
  sha256 TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processed', 'error')),
  status_details TEXT,
  upstream_file_id TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX files_by_project ON files(project_id, id);
CREATE INDEX files_by_expiry ON files(expires_at);
`,
} as const;
