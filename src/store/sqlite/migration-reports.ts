import { REPORT_INDEXES } from '../report-sql.js';

/**
 * SQLite migration 4: what the lists and reports read fast.
 * - audit_hourly: sums of the audit trail per (Project, hour of reservation, alias, connection,
 *   upstream model, key, state), kept by a trigger in the settlement's own transaction (one writer,
 *   so the upsert never waits) and backfilled from the existing rows. The spend report reads it
 *   instead of scanning a million audit rows. It is keyed by `state` so the one definition of an
 *   unknown attempt (store/report-sql.ts) applies to it unchanged.
 * - refusals: reservations that were not admitted (reports/refusal-recorder.ts writes them).
 * - keyset indexes of the lists (created_at, id) and of the cost-per-Outcome period.
 */
const ROLLUP_KEY = 'project_id, hour, alias, connection, upstream_model, key_id, state';
const SUMS =
  'calls, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, committed';

export const SQLITE_MIGRATION_REPORTS = {
  version: 6,
  name: 'reports: hourly audit rollup, refusals, list indexes',
  sql: `
CREATE TABLE audit_hourly (
  project_id TEXT NOT NULL,
  hour TEXT NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  key_id TEXT NOT NULL,
  state TEXT NOT NULL,
  calls INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_creation_input_tokens INTEGER NOT NULL,
  cache_read_input_tokens INTEGER NOT NULL,
  committed INTEGER NOT NULL,
  PRIMARY KEY (${ROLLUP_KEY})
) WITHOUT ROWID;

INSERT INTO audit_hourly (${ROLLUP_KEY}, ${SUMS})
SELECT project_id, substr(created_at, 1, 13), alias, connection, upstream_model, key_id, state, COUNT(*),
  COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cache_creation_input_tokens), 0),
  COALESCE(SUM(cache_read_input_tokens), 0), SUM(cost)
FROM audit GROUP BY 1, 2, 3, 4, 5, 6, 7;

CREATE TRIGGER audit_hourly_rollup AFTER INSERT ON audit BEGIN
  INSERT INTO audit_hourly (${ROLLUP_KEY}, ${SUMS})
  VALUES (NEW.project_id, substr(NEW.created_at, 1, 13), NEW.alias, NEW.connection, NEW.upstream_model, NEW.key_id,
    NEW.state, 1, COALESCE(NEW.input_tokens, 0), COALESCE(NEW.output_tokens, 0),
    COALESCE(NEW.cache_creation_input_tokens, 0), COALESCE(NEW.cache_read_input_tokens, 0), NEW.cost)
  ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET
    calls = calls + 1,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,
    cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,
    committed = committed + excluded.committed;
END;

CREATE TABLE refusals (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  run_id TEXT,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL
);
${REPORT_INDEXES}
`,
} as const;
