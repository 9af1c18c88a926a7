/**
 * SQLite migration 11 (issue 40): the request log and attribution (docs/request-log.md).
 * - `metadata` (JSON text) on Work Units and Runs, set at creation.
 * - On attempts, what the reservation knows of the call: call_id, tags, route, trace_id.
 * - On the audit trail, those four copied at settlement, plus the Work Unit and the metadata the
 *   settlement reads from the Run (its Work Unit's overlaid by its own), the first byte time and the
 *   upstream's request id.
 * - Indexes of the log's order (created_at DESC, attempt_id DESC) per Project, key, Run and Work
 *   Unit. Tag and metadata filters read the Project's rows in that order (no JSON index here: the
 *   10-million-row figures are PostgreSQL's, docs/request-log.md).
 */
export const SQLITE_MIGRATION_REQUEST_LOG = {
  version: 11,
  name: 'request log and attribution',
  sql: `
ALTER TABLE work_units ADD COLUMN metadata TEXT;
ALTER TABLE runs ADD COLUMN metadata TEXT;
ALTER TABLE attempts ADD COLUMN call_id TEXT;
ALTER TABLE attempts ADD COLUMN tags TEXT;
ALTER TABLE attempts ADD COLUMN route TEXT;
ALTER TABLE attempts ADD COLUMN trace_id TEXT;
ALTER TABLE audit ADD COLUMN work_unit_id TEXT;
ALTER TABLE audit ADD COLUMN tags TEXT;
ALTER TABLE audit ADD COLUMN metadata TEXT;
ALTER TABLE audit ADD COLUMN route TEXT;
ALTER TABLE audit ADD COLUMN call_id TEXT;
ALTER TABLE audit ADD COLUMN first_byte_ms INTEGER;
ALTER TABLE audit ADD COLUMN upstream_request_id TEXT;
ALTER TABLE audit ADD COLUMN trace_id TEXT;
CREATE INDEX audit_log_by_project ON audit(project_id, created_at DESC, attempt_id DESC);
CREATE INDEX audit_log_by_key ON audit(project_id, key_id, created_at DESC, attempt_id DESC);
CREATE INDEX audit_log_by_run ON audit(run_id, created_at DESC, attempt_id DESC);
CREATE INDEX audit_log_by_work_unit ON audit(work_unit_id, created_at DESC, attempt_id DESC);
CREATE INDEX attempts_open_by_project ON attempts(project_id, created_at) WHERE state = 'reserved';
`,
};
