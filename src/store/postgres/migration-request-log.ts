/**
 * PostgreSQL migration 11 (issue 40): the request log and attribution (docs/request-log.md).
 * - `metadata` (JSONB) on Work Units and Runs, set at creation.
 * - On attempts, what the reservation knows of the call: call_id, tags, route, trace_id.
 * - On the audit trail, those four copied at settlement, plus the Work Unit and the metadata the
 *   settlement reads from the Run (its Work Unit's overlaid by its own), the first byte time and the
 *   upstream's request id.
 * - The ledger's one-statement functions of migration 9 write the new columns: their parameters
 *   changed, so the old signatures are dropped and the functions created again from the current
 *   statements (migration-ledger-functions.ts).
 * - Indexes of the log's order (created_at DESC, attempt_id DESC) per Project, key, Run and Work
 *   Unit; GIN (jsonb_path_ops) on tags and metadata for `tag.<key>=` and `metadata.<key>=` (`@>`).
 *   Open attempts of a Project are found through a partial index on the reserved ones.
 */
import { ledgerFunctionsSql } from './migration-ledger-functions.js';

export const POSTGRES_MIGRATION_REQUEST_LOG = {
  version: 11,
  name: 'request log and attribution',
  sql: `
ALTER TABLE work_units ADD COLUMN metadata JSONB;
ALTER TABLE runs ADD COLUMN metadata JSONB;
ALTER TABLE attempts ADD COLUMN call_id TEXT, ADD COLUMN tags JSONB, ADD COLUMN route JSONB, ADD COLUMN trace_id TEXT;
ALTER TABLE audit ADD COLUMN work_unit_id TEXT, ADD COLUMN tags JSONB, ADD COLUMN metadata JSONB,
  ADD COLUMN route JSONB, ADD COLUMN call_id TEXT, ADD COLUMN first_byte_ms BIGINT,
  ADD COLUMN upstream_request_id TEXT, ADD COLUMN trace_id TEXT;
CREATE INDEX audit_log_by_project ON audit(project_id, created_at DESC, attempt_id DESC);
CREATE INDEX audit_log_by_key ON audit(project_id, key_id, created_at DESC, attempt_id DESC);
CREATE INDEX audit_log_by_run ON audit(run_id, created_at DESC, attempt_id DESC) WHERE run_id IS NOT NULL;
CREATE INDEX audit_log_by_work_unit ON audit(work_unit_id, created_at DESC, attempt_id DESC)
  WHERE work_unit_id IS NOT NULL;
CREATE INDEX audit_log_tags ON audit USING gin (tags jsonb_path_ops) WHERE tags IS NOT NULL;
CREATE INDEX audit_log_metadata ON audit USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;
CREATE INDEX attempts_open_by_project ON attempts(project_id, created_at) WHERE state = 'reserved';
CREATE INDEX work_units_metadata ON work_units USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;
CREATE INDEX runs_metadata ON runs USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;
DROP FUNCTION IF EXISTS svc_reserve_at_once(text[], text[], text[], text[], bigint[], timestamptz[], text[], text[],
  text[], text[], text[], text[], timestamptz[], text[], bigint, text, text, timestamptz);
DROP FUNCTION IF EXISTS svc_settle_at_once(text[], text[], bigint[], timestamptz[], text[], bigint[], bigint[], bigint[],
  bigint[], int[], bigint[]);
${ledgerFunctionsSql('CREATE OR REPLACE')}
`,
};
