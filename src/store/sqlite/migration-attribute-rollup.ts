/**
 * SQLite migration 14 (issue 40): the hourly rollup of attempts by attribute, so a spend report
 * grouped by a tag or a metadata key (and day or hour) reads rollup rows, not every audit row of
 * the period.
 * - audit_attribute_hourly: per (Project, kind 'tag' | 'metadata', key, hour of reservation, value,
 *   state): the figures of audit_hourly over the attempts that carry that key with that value.
 *   Keyed by state like audit_hourly, so the one definition of an unknown attempt
 *   (store/report-sql.ts) applies unchanged. Not keyed by alias, connection, model or key (as
 *   PostgreSQL's: a report grouped by an attribute and one of them reads the audit rows).
 * - Kept by a trigger on audit inserts (one row per tag and per metadata key of the attempt; none
 *   for an attempt without attributes), in the settlement's own transaction, and backfilled from
 *   the existing rows. The group without a key is the hour's total from audit_hourly minus the
 *   key's values (store/report-rows.ts withUnattributed).
 */
const KEY = 'project_id, kind, name, hour, value, state';
const SUMS =
  'calls, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, committed';

const KINDS = [
  { kind: 'tag', column: 'tags' },
  { kind: 'metadata', column: 'metadata' },
] as const;

/** `(key, value)` pairs of audit row `row`'s JSON object column (none for NULL or a non-object). */
function pairsOf(row: string, column: string): string {
  return `json_each(${row}.${column}) AS pair`;
}
function isObject(row: string, column: string): string {
  return `json_type(${row}.${column}) = 'object'`;
}

/** The backfill: every existing audit row's attributes, one SELECT per kind. */
const BACKFILL = KINDS.map(
  ({ kind, column }) => `SELECT a.project_id, '${kind}', pair.key, substr(a.created_at, 1, 13), pair.value,
  a.state, COUNT(*), COALESCE(SUM(a.input_tokens), 0),
  COALESCE(SUM(a.output_tokens), 0), COALESCE(SUM(a.cache_creation_input_tokens), 0),
  COALESCE(SUM(a.cache_read_input_tokens), 0), SUM(a.cost)
FROM audit a, ${pairsOf('a', column)} WHERE ${isObject('a', column)}
GROUP BY 1, 2, 3, 4, 5, 6`,
).join('\nUNION ALL\n');

/** The trigger's upsert of one kind of NEW's attributes. */
function upsertOf(kind: string, column: string): string {
  return `INSERT INTO audit_attribute_hourly (${KEY}, ${SUMS})
  SELECT NEW.project_id, '${kind}', pair.key, substr(NEW.created_at, 1, 13), pair.value, NEW.state, 1,
    COALESCE(NEW.input_tokens, 0),
    COALESCE(NEW.output_tokens, 0), COALESCE(NEW.cache_creation_input_tokens, 0),
    COALESCE(NEW.cache_read_input_tokens, 0), NEW.cost
  FROM ${pairsOf('NEW', column)} WHERE ${isObject('NEW', column)}
  ON CONFLICT (${KEY}) DO UPDATE SET
    calls = calls + 1,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,
    cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,
    committed = committed + excluded.committed;`;
}

export const SQLITE_MIGRATION_ATTRIBUTE_ROLLUP = {
  version: 14,
  name: 'reports: hourly rollup of attempts by tag and metadata value',
  sql: `
CREATE TABLE audit_attribute_hourly (
  project_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('tag', 'metadata')),
  name TEXT NOT NULL,
  hour TEXT NOT NULL,
  value TEXT NOT NULL,
  state TEXT NOT NULL,
  calls INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_creation_input_tokens INTEGER NOT NULL,
  cache_read_input_tokens INTEGER NOT NULL,
  committed INTEGER NOT NULL,
  PRIMARY KEY (${KEY})
) WITHOUT ROWID;

INSERT INTO audit_attribute_hourly (${KEY}, ${SUMS})
${BACKFILL};

CREATE TRIGGER audit_attribute_hourly_rollup AFTER INSERT ON audit
WHEN NEW.tags IS NOT NULL OR NEW.metadata IS NOT NULL BEGIN
  ${KINDS.map(({ kind, column }) => upsertOf(kind, column)).join('\n  ')}
END;
`,
} as const;
