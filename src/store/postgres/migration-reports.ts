import { REPORT_INDEXES } from '../report-sql.js';

/**
 * PostgreSQL migration 4: what the lists and reports read fast.
 * - audit_report: a covering index on (Project, reservation time) holding every column the spend
 *   report sums, so a 30-day report is an index-only range scan. No rollup table here: concurrent
 *   settlements would queue on the same rollup row's lock.
 * - refusals: reservations that were not admitted (reports/refusal-recorder.ts writes them).
 * - keyset indexes of the lists (created_at, id) and of the cost-per-Outcome period.
 */
export const POSTGRES_MIGRATION_REPORTS = {
  version: 6,
  name: 'reports: covering audit index, refusals, list indexes',
  sql: `
CREATE INDEX audit_report ON audit(project_id, created_at)
  INCLUDE (alias, connection, upstream_model, key_id, state, cost, input_tokens, output_tokens,
    cache_creation_input_tokens, cache_read_input_tokens);

CREATE TABLE refusals (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  run_id TEXT,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
${REPORT_INDEXES}
`,
} as const;
