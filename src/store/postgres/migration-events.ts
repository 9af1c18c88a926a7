/**
 * PostgreSQL migration 12: the events table, the outbox of docs/events.md. `sequence` is the global
 * delivery order; `dedupe_key` (NULL for events that happen once by nature) makes a threshold event
 * fire once across replicas: every insert is `ON CONFLICT DO NOTHING`. svc_event_id() makes an
 * event id in SQL (`evt_` + 26 Crockford base32 characters, like lib/ids.ts) for the events the
 * ledger functions write. `expiry_noted` on Runs and keys marks the ones whose expiry the events
 * sweep has written (run.expired, key.expired), so each pass reads only the newly expired through
 * the partial indexes.
 */
export const POSTGRES_EVENTS_TABLE_SQL = `
CREATE TABLE events (
  sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL,
  type TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  dedupe_key TEXT UNIQUE,
  occurred_at TIMESTAMPTZ NOT NULL,
  data JSONB NOT NULL
);
CREATE INDEX events_by_project ON events(project_id, sequence);
CREATE INDEX events_by_time ON events(occurred_at);
ALTER TABLE runs ADD COLUMN expiry_noted BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX runs_expiry_pending ON runs(expires_at) WHERE status = 'active' AND NOT expiry_noted;
ALTER TABLE gateway_keys ADD COLUMN expiry_noted BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX keys_expiry_pending ON gateway_keys(expires_at)
  WHERE expires_at IS NOT NULL AND revoked_at IS NULL AND NOT expiry_noted;

CREATE FUNCTION svc_event_id() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet CONSTANT text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  bytes bytea := uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid());
  out text := 'evt_';
BEGIN
  FOR position IN 0..25 LOOP
    out := out || substr(alphabet, (get_byte(bytes, position) & 31) + 1, 1);
  END LOOP;
  RETURN out;
END
$$;
`;

export const POSTGRES_MIGRATION_EVENTS = {
  version: 12,
  name: 'events',
  sql: POSTGRES_EVENTS_TABLE_SQL,
};
