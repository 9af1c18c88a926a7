/**
 * PostgreSQL migration 8 (issue 12): hourly rollups of the audit trail and of the refusals, folded
 * at read time (report-fold.ts), so a 30-day report reads the rollup rows plus the few raw rows not
 * folded yet instead of a million audit rows. The write path is untouched: nothing here runs in a
 * settlement.
 * - audit_hourly: per (Project, UTC hour of reservation, alias, connection, upstream model, key):
 *   calls, tokens by type, committed, and the unknown attempts and their committed part (classified
 *   with UNKNOWN_ATTEMPT_SQL when folded).
 * - refusals_hourly: per the same key, the refused reservations.
 * - report_folds: per source table, the watermark: every row with an id at or below it is in the
 *   rollup, no row above it is. It starts at 0, so the first fold backfills existing rows.
 * - audit_report (migration 6's covering index on reservation time) is dropped: no report reads the
 *   audit trail by time any more (the raw tail is read along audit(project_id, sequence)), and it
 *   cost every settlement a wide index entry.
 */
export const POSTGRES_MIGRATION_REPORT_ROLLUPS = {
  version: 8,
  name: 'reports: hourly rollups of the audit trail and refusals, folded at read time',
  sql: `
CREATE TABLE audit_hourly (
  project_id TEXT NOT NULL,
  hour TIMESTAMPTZ NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  key_id TEXT NOT NULL,
  calls BIGINT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  cache_creation_input_tokens BIGINT NOT NULL,
  cache_read_input_tokens BIGINT NOT NULL,
  committed BIGINT NOT NULL,
  unknown_attempts BIGINT NOT NULL,
  unknown_committed BIGINT NOT NULL,
  PRIMARY KEY (project_id, hour, alias, connection, upstream_model, key_id)
);

CREATE TABLE refusals_hourly (
  project_id TEXT NOT NULL,
  hour TIMESTAMPTZ NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  key_id TEXT NOT NULL,
  refusals BIGINT NOT NULL,
  PRIMARY KEY (project_id, hour, alias, connection, upstream_model, key_id)
);

CREATE TABLE report_folds (
  source TEXT PRIMARY KEY CHECK (source IN ('audit', 'refusals')),
  watermark BIGINT NOT NULL CHECK (watermark >= 0)
);
INSERT INTO report_folds (source, watermark) VALUES ('audit', 0), ('refusals', 0);
CREATE INDEX refusals_by_id ON refusals(project_id, id);
DROP INDEX audit_report;
`,
} as const;
