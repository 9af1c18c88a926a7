/**
 * The columns the ledger writes on PostgreSQL, in one order for every writer: the batch
 * transaction (ledger-batch.ts, which the single calls of ledger.ts use too) and the one-statement
 * batch (ledger-at-once.ts).
 */
import type { ReserveInput } from '../port.js';

/** An attempt as reserved; its state is always 'reserved'. */
export const ATTEMPT_COLUMNS =
  'id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint, alias, connection, profile, upstream_model, created_at, cap_counters';

/** An audit entry. */
export const AUDIT_COLUMNS =
  'attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome, http_status, duration_ms, overran, created_at, settled_at';

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
