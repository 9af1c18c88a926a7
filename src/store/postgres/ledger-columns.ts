/**
 * The columns the ledger writes on PostgreSQL, in one order for every writer: the batch
 * transaction (ledger-batch.ts, which the single calls of ledger.ts use too) and the one-statement
 * batch (ledger-at-once.ts).
 */
import type { ReserveInput, SettleInput } from '../port.js';

/** An attempt as reserved; its state is always 'reserved'. */
export const ATTEMPT_COLUMNS =
  'id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint, alias, connection, profile, upstream_model, created_at, cap_counters, call_id, tags, route, trace_id';

/** An audit entry. */
export const AUDIT_COLUMNS =
  'attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status, duration_ms, overran, created_at, settled_at, work_unit_id, metadata, call_id, tags, route, trace_id, first_byte_ms, upstream_request_id';

/**
 * The audit entry's Work Unit and metadata, read from its Run (`r`, joined on the entry's run_id)
 * and that Run's Work Unit (`w`): the Work Unit's metadata overlaid by the Run's; null without a Run.
 */
export const AUDIT_RUN_JOIN =
  'LEFT JOIN runs r ON r.id = s.run_id LEFT JOIN work_units w ON w.id = r.work_unit_id';
export const AUDIT_RUN_COLUMNS =
  "r.work_unit_id, CASE WHEN r.id IS NULL THEN NULL ELSE coalesce(w.metadata, '{}'::jsonb) || coalesce(r.metadata, '{}'::jsonb) END";

const json = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

/**
 * The attribution columns of a reservation batch, as the arrays its `unnest` takes (text; the
 * statement casts tags and route to jsonb): call_id, tags, route, trace_id.
 */
export function attributionColumns(inputs: readonly ReserveInput[]): unknown[][] {
  return [
    inputs.map((input) => input.attribution?.callId ?? null),
    inputs.map((input) => json(input.attribution?.tags)),
    inputs.map((input) => json(input.attribution?.route)),
    inputs.map((input) => input.attribution?.traceId ?? null),
  ];
}

/**
 * The columns of the attempts a reservation batch inserts, as the arrays its `unnest` takes: id,
 * project_id, key_id, run_id, reservation, lease_expires_at, owner, endpoint, alias, connection,
 * profile, upstream_model, created_at.
 */
export function attemptColumns(inputs: readonly ReserveInput[]): unknown[][] {
  const column = <K extends keyof ReserveInput>(key: K) => inputs.map((input) => input[key]);
  return [
    column('attemptId'),
    column('projectId'),
    column('keyId'),
    column('runId'),
    column('reservationMicrosUsd'),
    column('leaseExpiresAt'),
    column('owner'),
    column('endpoint'),
    column('alias'),
    column('connection'),
    column('profile'),
    column('upstreamModel'),
    column('createdAt'),
  ];
}

/** A settlement's first byte time as the BIGINT column takes it (whole milliseconds) or null. */
export function firstByte(input: SettleInput): number | null {
  return input.firstByteMs === null || input.firstByteMs === undefined ? null : Math.round(input.firstByteMs);
}
