/**
 * Numbered PostgreSQL migrations, applied in order, one transaction each, under an advisory lock
 * (postgres-store.ts migrate()). Same tables and columns as the SQLite schema, with PostgreSQL
 * types: money and token counts are BIGINT (node-postgres returns them as strings; rows.ts maps
 * them with Number), times are TIMESTAMPTZ (compared as instants, never as text), flags are
 * BOOLEAN, lists are JSONB. An Outcome's `value` stays TEXT holding JSON: JSONB would come back
 * already parsed, and a string value would then be indistinguishable from JSON text in rows.ts.
 */

import { POSTGRES_FILES_MIGRATION } from './files-migration.js';
import { POSTGRES_MIGRATION_ATTRIBUTE_ROLLUP } from './migration-attribute-rollup.js';
import { POSTGRES_MIGRATION_JOBS_RESOURCES } from './migration-jobs-resources.js';
import { POSTGRES_MIGRATION_KEYS_CAPS } from './migration-keys-caps.js';
import { POSTGRES_MIGRATION_LEDGER_FUNCTIONS } from './migration-ledger-functions.js';
import { POSTGRES_MIGRATION_RATE_BUCKETS } from './migration-rate-buckets.js';
import { POSTGRES_MIGRATION_REPORT_ROLLUPS } from './migration-report-rollups.js';
import { POSTGRES_MIGRATION_REPORTS } from './migration-reports.js';
import { POSTGRES_MIGRATION_REQUEST_LOG } from './migration-request-log.js';
import { POSTGRES_MIGRATION_RESOURCE_LISTS } from './migration-resource-lists.js';
import { POSTGRES_MIGRATION_SETTLEMENT_OUTCOMES } from './migration-settlement-outcomes.js';

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'governance and ledger',
    sql: `
CREATE TABLE gateway_keys (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  scopes JSONB NOT NULL,
  label TEXT,
  created_at TIMESTAMPTZ NOT NULL,
  revoked_at TIMESTAMPTZ
);
CREATE INDEX gateway_keys_by_project ON gateway_keys(project_id, created_at, id);

CREATE TABLE outcome_definitions (
  project_id TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('BOOLEAN', 'CATEGORICAL')),
  allowed_values JSONB NOT NULL,
  enabled BOOLEAN NOT NULL,
  PRIMARY KEY (project_id, id, version)
);

CREATE TABLE work_units (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  created_at TIMESTAMPTZ NOT NULL,
  closed_at TIMESTAMPTZ,
  definitions JSONB NOT NULL,
  run_count INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0)
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  work_unit_id TEXT NOT NULL REFERENCES work_units(id),
  budget BIGINT NOT NULL CHECK (budget >= 0),
  committed BIGINT NOT NULL DEFAULT 0 CHECK (committed >= 0),
  reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  overrun BIGINT NOT NULL DEFAULT 0 CHECK (overrun >= 0),
  unknown_attempts INTEGER NOT NULL DEFAULT 0 CHECK (unknown_attempts >= 0),
  status TEXT NOT NULL CHECK (status IN ('active', 'closed')),
  created_at TIMESTAMPTZ NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  closed_at TIMESTAMPTZ,
  close_reason TEXT,
  CONSTRAINT runs_within_budget CHECK (committed + reserved <= budget + overrun)
);
CREATE INDEX runs_by_work_unit ON runs(work_unit_id, created_at, id);

CREATE TABLE project_sequences (
  project_id TEXT PRIMARY KEY,
  last_sequence BIGINT NOT NULL
);

CREATE TABLE outcomes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  work_unit_id TEXT NOT NULL REFERENCES work_units(id),
  definition_id TEXT NOT NULL,
  definition_version INTEGER NOT NULL,
  value TEXT NOT NULL,
  reporter_key_id TEXT NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  ingested_at TIMESTAMPTZ NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 1),
  governance_sequence BIGINT NOT NULL,
  provisional BOOLEAN NOT NULL,
  evidence_ref TEXT,
  evidence_sha256 TEXT,
  supersedes_outcome_id TEXT REFERENCES outcomes(id),
  is_head BOOLEAN NOT NULL,
  CONSTRAINT outcomes_supersedes_once UNIQUE (supersedes_outcome_id)
);
CREATE UNIQUE INDEX outcomes_one_head ON outcomes(work_unit_id, definition_id) WHERE is_head;
CREATE INDEX outcomes_by_work_unit ON outcomes(work_unit_id, governance_sequence);

CREATE TABLE idempotency (
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  response TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (project_id, key_id, idempotency_key)
);
CREATE INDEX idempotency_expiry ON idempotency(expires_at);

CREATE TABLE attempts (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  run_id TEXT REFERENCES runs(id),
  state TEXT NOT NULL CHECK (state IN ('reserved', 'settled', 'unknown', 'released')),
  reservation BIGINT NOT NULL CHECK (reservation >= 0),
  cost BIGINT,
  lease_expires_at TIMESTAMPTZ NOT NULL,
  owner TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  profile TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  settled_at TIMESTAMPTZ
);
CREATE INDEX attempts_open ON attempts(lease_expires_at) WHERE state = 'reserved';

CREATE TABLE audit (
  sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  attempt_id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  run_id TEXT,
  endpoint TEXT NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  profile TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  state TEXT NOT NULL,
  reservation BIGINT NOT NULL,
  cost BIGINT NOT NULL,
  input_tokens BIGINT,
  output_tokens BIGINT,
  cache_creation_input_tokens BIGINT,
  cache_read_input_tokens BIGINT,
  outcome TEXT NOT NULL,
  http_status INTEGER,
  duration_ms BIGINT NOT NULL,
  overran BOOLEAN NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  settled_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_by_run ON audit(run_id, sequence);
CREATE INDEX audit_by_project ON audit(project_id, sequence);

CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_append_only_rows BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_append_only_truncate BEFORE TRUNCATE ON audit
  FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
`,
  },
  POSTGRES_FILES_MIGRATION,
  POSTGRES_MIGRATION_JOBS_RESOURCES,
  POSTGRES_MIGRATION_SETTLEMENT_OUTCOMES,
  POSTGRES_MIGRATION_RATE_BUCKETS,
  POSTGRES_MIGRATION_REPORTS,
  POSTGRES_MIGRATION_KEYS_CAPS,
  POSTGRES_MIGRATION_REPORT_ROLLUPS,
  POSTGRES_MIGRATION_LEDGER_FUNCTIONS,
  POSTGRES_MIGRATION_RESOURCE_LISTS,
  POSTGRES_MIGRATION_REQUEST_LOG,
  POSTGRES_MIGRATION_ATTRIBUTE_ROLLUP,
];
