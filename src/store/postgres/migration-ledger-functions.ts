/**
 * PostgreSQL migration 9 (issue 16): the ledger's one-statement batches (ledger-at-once.ts) as two
 * PL/pgSQL functions, so the database plans them once per connection instead of once per batch.
 *
 * Sent as unnamed statements, the two were parsed, analysed and planned at every batch: about 40 %
 * of the database's CPU per call under load, beside 25 % to run them. Named prepared statements
 * would plan once, but PostgreSQL fixes a prepared statement's generic plan after five executions
 * and keeps it: made while `attempts` is nearly empty (a new database, the first calls), that plan
 * scanned the table and cost five times the CPU per call once it had grown (docs/performance.md,
 * "The ledger on PostgreSQL"). A function's statements are prepared the same way, but a function can
 * carry its own settings: `plan_cache_mode = force_generic_plan` plans each statement once per
 * connection, and `enable_seqscan = off` keeps that plan on the primary keys whatever the tables
 * held when it was made. The settings hold only while the function runs.
 *
 * The statements are those ledger-at-once.ts sent before, unchanged but for their results:
 * - svc_reserve_at_once returns how many attempts it inserted (all of the batch, or none);
 * - svc_settle_at_once returns the ids of the attempts it settled.
 * Each runs as the one statement that calls it (autocommit), so a batch is still one transaction.
 *
 * Changing a statement below changes what this migration creates on a new database only: existing
 * databases have applied it already, so the change also needs a migration of its own that replaces
 * the function (`CREATE OR REPLACE FUNCTION`) from the same constants.
 */
import { settlementAmountsSql } from '../rules.js';
import { ATTEMPT_COLUMNS, AUDIT_COLUMNS, AUDIT_RUN_COLUMNS, AUDIT_RUN_JOIN } from './ledger-columns.js';

/** The settings each function runs with, as SET clauses of its definition. */
export const LEDGER_FUNCTION_SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ['plan_cache_mode', 'force_generic_plan'],
  ['enable_seqscan', 'off'],
];
const SETTINGS = LEDGER_FUNCTION_SETTINGS.map(([name, value]) => `SET ${name} = ${value}`).join(' ');
const AMOUNTS = settlementAmountsSql('d.state', 'a.reservation', 'd.cost');

/** A function's statement: its parameters' types and its data-modifying CTEs, whose last is `done`. */
export interface LedgerStatement {
  parameters: string;
  ctes: string;
}

/** The reservation batch; `done` returns one row per attempt inserted. */
export const RESERVE_AT_ONCE: LedgerStatement = {
  parameters: `text[], text[], text[], text[], bigint[], timestamptz[], text[], text[], text[], text[], text[], text[],
  timestamptz[], text[], bigint, text, text, timestamptz, text[], text[], text[], text[]`,
  // A key whose limits name any cap leaves the batch to ledger-batch.ts, which reads them (a managed
  // key without caps stores '{}'). The Run must outlive the latest 'now' of the batch.
  ctes: `WITH capped AS (
    SELECT 1 FROM gateway_keys WHERE id = ANY($14) AND limits IS NOT NULL AND limits <> '{}'::jsonb
  ), reserved AS (
    UPDATE runs SET reserved = reserved + $15
    WHERE id = $16 AND project_id = $17 AND status = 'active' AND expires_at > $18
      AND committed + reserved + $15 <= budget AND NOT EXISTS (SELECT 1 FROM capped)
    RETURNING id
  ), done AS (
    INSERT INTO attempts (${ATTEMPT_COLUMNS})
    SELECT id, project_id, key_id, run_id, 'reserved', reservation, lease_expires_at, owner, endpoint, alias,
      connection, profile, upstream_model, created_at, NULL, call_id, tags::jsonb, route::jsonb, trace_id
    FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $19, $20, $21, $22)
      AS d(id, project_id, key_id, run_id, reservation, lease_expires_at, owner, endpoint, alias, connection,
        profile, upstream_model, created_at, call_id, tags, route, trace_id)
    WHERE NOT EXISTS (SELECT 1 FROM capped) AND ($16 IS NULL OR EXISTS (SELECT 1 FROM reserved))
    RETURNING id
  )`,
};

/** The settlement batch; `done` returns the id of each attempt settled. */
export const SETTLE_AT_ONCE: LedgerStatement = {
  parameters:
    'text[], text[], bigint[], timestamptz[], text[], bigint[], bigint[], bigint[], bigint[], int[], bigint[], bigint[], text[]',
  ctes: `WITH d AS (
    SELECT * FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
      WITH ORDINALITY AS d(id, state, cost, settled_at, outcome, input_tokens, output_tokens,
        cache_creation_input_tokens, cache_read_input_tokens, http_status, duration_ms, first_byte_ms,
        upstream_request_id, position)
  ), locked AS MATERIALIZED (
    SELECT id, state = 'reserved' AND cap_counters IS NULL AS open
    FROM attempts WHERE id = ANY($1) ORDER BY id FOR UPDATE
  ), settled AS (
    UPDATE attempts a SET state = d.state, cost = ${AMOUNTS.commit}, settled_at = d.settled_at, outcome = d.outcome
    FROM d JOIN locked ON locked.id = d.id WHERE a.id = locked.id AND locked.open
    RETURNING a.id, a.project_id, a.key_id, a.run_id, a.endpoint, a.alias, a.connection, a.profile,
      a.upstream_model, a.state, a.reservation, a.cost, a.created_at, a.settled_at, a.outcome, d.position,
      d.input_tokens, d.output_tokens, d.cache_creation_input_tokens, d.cache_read_input_tokens,
      d.http_status, d.duration_ms, ${AMOUNTS.overrun} AS overrun, ${AMOUNTS.unknown} AS unknown,
      a.call_id, a.tags, a.route, a.trace_id, d.first_byte_ms, d.upstream_request_id
  ), locked_runs AS (
    SELECT id FROM runs WHERE id IN (SELECT run_id FROM settled) ORDER BY id FOR UPDATE
  ), runs_settled AS (
    UPDATE runs SET reserved = runs.reserved - s.reserved, committed = runs.committed + s.commit,
      overrun = runs.overrun + s.overrun, unknown_attempts = runs.unknown_attempts + s.unknown
    FROM (SELECT run_id, sum(reservation) AS reserved, sum(cost) AS commit, sum(overrun) AS overrun,
            sum(unknown) AS unknown
          FROM settled WHERE run_id IS NOT NULL GROUP BY run_id) s
    WHERE runs.id = s.run_id AND runs.id IN (SELECT id FROM locked_runs)
  ), done AS (
    INSERT INTO audit (${AUDIT_COLUMNS})
    SELECT s.id, s.project_id, s.key_id, s.run_id, s.endpoint, s.alias, s.connection, s.profile, s.upstream_model,
      s.state, s.reservation, s.cost, s.input_tokens, s.output_tokens, s.cache_creation_input_tokens,
      s.cache_read_input_tokens, s.outcome, s.http_status, s.duration_ms, s.overrun > 0, s.created_at, s.settled_at,
      ${AUDIT_RUN_COLUMNS}, s.call_id, s.tags, s.route, s.trace_id, s.first_byte_ms, s.upstream_request_id
    FROM settled s ${AUDIT_RUN_JOIN} ORDER BY s.position
    RETURNING attempt_id AS id
  )`,
};

/**
 * The two functions' definitions from the statements above. Migration 9 creates them; a later
 * migration that changes a statement replaces them with `CREATE OR REPLACE` (after dropping the
 * previous signature when the parameters changed: migration-request-log.ts).
 */
export function ledgerFunctionsSql(create: 'CREATE' | 'CREATE OR REPLACE'): string {
  return `
${create} FUNCTION svc_reserve_at_once(${RESERVE_AT_ONCE.parameters}) RETURNS bigint LANGUAGE plpgsql ${SETTINGS} AS $fn$
DECLARE
  inserted bigint;
BEGIN
  ${RESERVE_AT_ONCE.ctes}
  SELECT count(*) INTO inserted FROM done;
  RETURN inserted;
END
$fn$;

${create} FUNCTION svc_settle_at_once(${SETTLE_AT_ONCE.parameters}) RETURNS text[] LANGUAGE plpgsql ${SETTINGS} AS $fn$
DECLARE
  settled_ids text[];
BEGIN
  ${SETTLE_AT_ONCE.ctes}
  SELECT coalesce(array_agg(id), '{}') INTO settled_ids FROM done;
  RETURN settled_ids;
END
$fn$;
`;
}

export const POSTGRES_MIGRATION_LEDGER_FUNCTIONS = {
  version: 9,
  name: 'ledger: the one-statement batches as functions, planned once per connection',
  sql: ledgerFunctionsSql('CREATE'),
};
