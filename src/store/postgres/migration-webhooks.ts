/**
 * PostgreSQL migration 13: webhook endpoints, their deliveries (one per event and endpoint), a
 * bounded attempt history per delivery, and the dispatcher's fan-out state: the watermark over
 * events.sequence and one marker per event fanned out above it (store/webhooks-port.ts). Times of
 * the delivery queue are epoch milliseconds (BIGINT), like the jobs table's.
 */
export const POSTGRES_MIGRATION_WEBHOOKS = {
  version: 13,
  name: 'webhooks',
  sql: `
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  url TEXT NOT NULL,
  description TEXT,
  event_types JSONB,
  source TEXT NOT NULL CHECK (source IN ('api', 'config')),
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at BIGINT,
  state TEXT NOT NULL CHECK (state IN ('active', 'disabled')),
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_by_project ON webhook_endpoints(project_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  event_sequence BIGINT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  resource_key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivering', 'succeeded', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  give_up_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  completed_at BIGINT,
  lease_owner TEXT,
  lease_expires_at BIGINT,
  last_status INTEGER,
  last_error TEXT,
  last_latency_ms INTEGER,
  CONSTRAINT webhook_deliveries_once UNIQUE (endpoint_id, event_sequence)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_by_resource ON webhook_deliveries(endpoint_id, resource_key, event_sequence);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries(endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries(event_sequence);

CREATE TABLE webhook_delivery_attempts (
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  status INTEGER,
  error TEXT,
  latency_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);

CREATE TABLE webhook_dispatch (
  name TEXT PRIMARY KEY,
  watermark BIGINT NOT NULL
);
INSERT INTO webhook_dispatch (name, watermark) VALUES ('events', 0);

CREATE TABLE webhook_fanned_out (
  event_sequence BIGINT PRIMARY KEY,
  fanned_at BIGINT NOT NULL
);
`,
};
