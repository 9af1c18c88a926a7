/**
 * PostgreSQL migration 14 (issue 40): the hourly rollup of attempts by attribute, so a spend report
 * grouped by a tag or a metadata key (and day or hour) reads rollup rows, not 30 days of audit rows.
 * - audit_attribute_hourly: per (Project, kind 'tag' | 'metadata', key, UTC hour of reservation,
 *   value): the spend report's figures over the attempts that carry that key with that value. An
 *   attempt adds to one row per tag and per metadata key it carries; one without attributes adds
 *   nothing (the group without a key is the hour's total from audit_hourly minus the key's values,
 *   store/report-rows.ts withUnattributed). Not keyed by alias, connection, model or Gateway Key:
 *   with them the rollup would hold about as many rows as the trail (docs/reports.md); a report
 *   grouped by an attribute AND one of them reads the audit rows of its range.
 * - Folded at read time like audit_hourly (report-fold.ts), under its own watermark
 *   ('audit_attributes' in report_folds), starting at 0: the first fold backfills the trail.
 */
export const POSTGRES_MIGRATION_ATTRIBUTE_ROLLUP = {
  version: 14,
  name: 'reports: hourly rollup of attempts by tag and metadata value',
  sql: `
CREATE TABLE audit_attribute_hourly (
  project_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('tag', 'metadata')),
  name TEXT NOT NULL,
  hour TIMESTAMPTZ NOT NULL,
  value TEXT NOT NULL,
  calls BIGINT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  cache_creation_input_tokens BIGINT NOT NULL,
  cache_read_input_tokens BIGINT NOT NULL,
  committed BIGINT NOT NULL,
  unknown_attempts BIGINT NOT NULL,
  unknown_committed BIGINT NOT NULL,
  PRIMARY KEY (project_id, kind, name, hour, value)
);

ALTER TABLE report_folds DROP CONSTRAINT report_folds_source_check;
ALTER TABLE report_folds ADD CONSTRAINT report_folds_source_check
  CHECK (source IN ('audit', 'audit_attributes', 'refusals'));
INSERT INTO report_folds (source, watermark) VALUES ('audit_attributes', 0);
`,
} as const;
