/** Numbered SQLite migrations, applied in order inside one transaction each. */
import type Database from 'better-sqlite3';
import { SQLITE_FILES_MIGRATION } from './files-migration.js';
import { SQLITE_MIGRATION_ATTEMPTS_RESERVED } from './migration-attempts-reserved.js';
import { SQLITE_MIGRATION_ATTRIBUTE_ROLLUP } from './migration-attribute-rollup.js';
import { SQLITE_MIGRATION_AUDIT_ROWID } from './migration-audit-rowid.js';
import { SQLITE_MIGRATION_CHECKS_WITHOUT_IN_LISTS } from './migration-checks-without-in-lists.js';
import { SQLITE_MIGRATION_EVENTS } from './migration-events.js';
import { SQLITE_MIGRATION_JOBS_RESOURCES } from './migration-jobs-resources.js';
import { SQLITE_MIGRATION_KEYS_CAPS } from './migration-keys-caps.js';
import { SQLITE_MIGRATION_LEDGER_TREES } from './migration-ledger-trees.js';
import { SQLITE_MIGRATION_LOG_INDEXES_ASCENDING } from './migration-log-indexes-ascending.js';
import { SQLITE_MIGRATION_RATE_BUCKETS } from './migration-rate-buckets.js';
import { SQLITE_MIGRATION_REPORT_FOLD } from './migration-report-fold.js';
import { SQLITE_MIGRATION_REPORTS } from './migration-reports.js';
import { SQLITE_MIGRATION_REQUEST_LOG } from './migration-request-log.js';
import { SQLITE_MIGRATION_RESOURCE_LISTS } from './migration-resource-lists.js';
import { SQLITE_MIGRATION_SETTLEMENT_OUTCOMES } from './migration-settlement-outcomes.js';
import { SQLITE_MIGRATION_WEBHOOKS } from './migration-webhooks.js';

export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: a change SQL alone cannot state. */
  apply?: (db: Database.Database) => void;
  /** What the operator is told before a migration that takes long on this database (none: undefined). */
  notice?: (db: Database.Database) => string | undefined;
}

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'governance and ledger',
    sql: `
CREATE TABLE gateway_keys (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  label TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE outcome_definitions (
  project_id TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('BOOLEAN', 'CATEGORICAL')),
  allowed_values TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  PRIMARY KEY (project_id, id, version)
);

CREATE TABLE work_units (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  created_at TEXT NOT NULL,
  closed_at TEXT,
  definitions TEXT NOT NULL,
  run_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  work_unit_id TEXT NOT NULL REFERENCES work_units(id),
  budget INTEGER NOT NULL CHECK (budget >= 0),
  committed INTEGER NOT NULL DEFAULT 0 CHECK (committed >= 0),
  reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  overrun INTEGER NOT NULL DEFAULT 0 CHECK (overrun >= 0),
  unknown_attempts INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('active', 'closed')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  closed_at TEXT,
  close_reason TEXT,
  CHECK (committed + reserved <= budget + overrun)
);
CREATE INDEX runs_by_work_unit ON runs(work_unit_id, created_at);

CREATE TABLE project_sequences (
  project_id TEXT PRIMARY KEY,
  last_sequence INTEGER NOT NULL
);

CREATE TABLE outcomes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  work_unit_id TEXT NOT NULL REFERENCES work_units(id),
  definition_id TEXT NOT NULL,
  definition_version INTEGER NOT NULL,
  value TEXT NOT NULL,
  reporter_key_id TEXT NOT NULL,
  observed_at TEXT NOT NULL,
  ingested_at TEXT NOT NULL,
  revision INTEGER NOT NULL,
  governance_sequence INTEGER NOT NULL,
  provisional INTEGER NOT NULL,
  evidence_ref TEXT,
  evidence_sha256 TEXT,
  supersedes_outcome_id TEXT UNIQUE REFERENCES outcomes(id),
  is_head INTEGER NOT NULL
);
CREATE UNIQUE INDEX outcomes_one_head ON outcomes(work_unit_id, definition_id) WHERE is_head = 1;
CREATE INDEX outcomes_by_work_unit ON outcomes(work_unit_id, governance_sequence);

CREATE TABLE idempotency (
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  response TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (project_id, key_id, idempotency_key)
);
CREATE INDEX idempotency_expiry ON idempotency(expires_at);

CREATE TABLE attempts (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  run_id TEXT REFERENCES runs(id),
  state TEXT NOT NULL CHECK (state IN ('reserved', 'settled', 'unknown', 'released')),
  reservation INTEGER NOT NULL CHECK (reservation >= 0),
  cost INTEGER,
  lease_expires_at TEXT NOT NULL,
  owner TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  alias TEXT NOT NULL,
  connection TEXT NOT NULL,
  profile TEXT NOT NULL,
  upstream_model TEXT NOT NULL,
  created_at TEXT NOT NULL,
  settled_at TEXT
);
CREATE INDEX attempts_open ON attempts(state, lease_expires_at);

CREATE TABLE audit (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
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
  reservation INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  input_tokens INTEGER,
  output_tokens INTEGER,
  cache_creation_input_tokens INTEGER,
  cache_read_input_tokens INTEGER,
  outcome TEXT NOT NULL,
  http_status INTEGER,
  duration_ms INTEGER NOT NULL,
  overran INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  settled_at TEXT NOT NULL
);
CREATE INDEX audit_by_run ON audit(run_id, sequence);
CREATE INDEX audit_by_project ON audit(project_id, sequence);
CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
`,
  },
  SQLITE_FILES_MIGRATION,
  SQLITE_MIGRATION_JOBS_RESOURCES,
  SQLITE_MIGRATION_SETTLEMENT_OUTCOMES,
  SQLITE_MIGRATION_RATE_BUCKETS,
  SQLITE_MIGRATION_REPORTS,
  SQLITE_MIGRATION_KEYS_CAPS,
  SQLITE_MIGRATION_ATTEMPTS_RESERVED,
  SQLITE_MIGRATION_CHECKS_WITHOUT_IN_LISTS,
  SQLITE_MIGRATION_RESOURCE_LISTS,
  SQLITE_MIGRATION_REQUEST_LOG,
  SQLITE_MIGRATION_EVENTS,
  SQLITE_MIGRATION_WEBHOOKS,
  SQLITE_MIGRATION_ATTRIBUTE_ROLLUP,
  SQLITE_MIGRATION_AUDIT_ROWID,
  SQLITE_MIGRATION_LOG_INDEXES_ASCENDING,
  SQLITE_MIGRATION_REPORT_FOLD,
  SQLITE_MIGRATION_LEDGER_TREES,
];
