/**
 * SQLite migration 17: the hourly report rollups are folded at read time and in the background
 * (report-fold.ts), as PostgreSQL's are, instead of by triggers in every settlement's transaction.
 *
 * - The triggers of migrations 6 and 14 (audit_hourly_rollup, audit_attribute_hourly_rollup) are
 *   dropped: a settlement no longer upserts a rollup row per attempt and per attribute, so its
 *   commit writes one or two B-trees fewer.
 * - report_folds: per source ('audit' for audit_hourly, 'audit_attributes' for
 *   audit_attribute_hourly), the watermark: every audit entry with a sequence at or below it is in
 *   that rollup, none above it is. The triggers kept both rollups complete up to this migration, so
 *   both watermarks start at the largest sequence, in the same transaction as the drop.
 * - A report reads a rollup plus the entries above its watermark (store/report-sql.ts), so its
 *   figures are exact however far the folds have got.
 */
export const SQLITE_MIGRATION_REPORT_FOLD = {
  version: 17,
  name: 'reports: hourly rollups folded at read time instead of by triggers',
  sql: `
DROP TRIGGER audit_hourly_rollup;
DROP TRIGGER audit_attribute_hourly_rollup;
CREATE TABLE report_folds (
  source TEXT PRIMARY KEY CHECK (source IN ('audit', 'audit_attributes')),
  watermark INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO report_folds (source, watermark)
SELECT source, (SELECT COALESCE(max(sequence), 0) FROM audit)
FROM (SELECT 'audit' AS source UNION ALL SELECT 'audit_attributes');
`,
} as const;
