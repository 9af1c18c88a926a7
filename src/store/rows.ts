/** Row -> domain mappers shared by both adapters (column names are the same in both schemas). */
import type { SettlementOutcome } from '../money/settlement.js';
import type { NewManagedKey } from './keys-port.js';
import type {
  AttemptIdentity,
  AttemptRoute,
  AttemptState,
  Attributes,
  AuditEntry,
  KeyRecord,
  Outcome,
  Run,
  SettledAttempt,
  WorkUnit,
} from './port.js';
import type { LoggedAttempt } from './request-log-port.js';

export type Row = Record<string, unknown>;

function text(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function optionalJson<T>(value: unknown): T | null {
  return value === null || value === undefined ? null : json<T>(value);
}

function flag(value: unknown): boolean {
  return value === true || Number(value) === 1;
}

function optionalNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function keyFromRow(row: Row): KeyRecord {
  return {
    id: text(row.id),
    projectId: text(row.project_id),
    scopes: json<string[]>(row.scopes),
    label: optionalText(row.label),
    createdAt: text(row.created_at),
    revokedAt: optionalText(row.revoked_at),
    expiresAt: optionalText(row.expires_at),
    models: row.models === null || row.models === undefined ? null : json<string[]>(row.models),
    limits: row.limits === null || row.limits === undefined ? {} : json<KeyRecord['limits']>(row.limits),
  };
}

export function workUnitFromRow(row: Row): WorkUnit {
  return {
    id: text(row.id),
    projectId: text(row.project_id),
    status: row.status as WorkUnit['status'],
    createdAt: text(row.created_at),
    closedAt: optionalText(row.closed_at),
    definitions: json<WorkUnit['definitions']>(row.definitions),
    metadata: optionalJson<Attributes>(row.metadata),
  };
}

export function runFromRow(row: Row): Run {
  return {
    id: text(row.id),
    projectId: text(row.project_id),
    workUnitId: text(row.work_unit_id),
    budgetMicrosUsd: Number(row.budget),
    committedMicrosUsd: Number(row.committed),
    reservedMicrosUsd: Number(row.reserved),
    overrunMicrosUsd: Number(row.overrun),
    unknownAttempts: Number(row.unknown_attempts),
    status: row.status as Run['status'],
    createdAt: text(row.created_at),
    expiresAt: text(row.expires_at),
    closedAt: optionalText(row.closed_at),
    closeReason: optionalText(row.close_reason),
    metadata: optionalJson<Attributes>(row.metadata),
  };
}

export function outcomeFromRow(row: Row): Outcome {
  return {
    id: text(row.id),
    projectId: text(row.project_id),
    workUnitId: text(row.work_unit_id),
    definitionId: text(row.definition_id),
    definitionVersion: Number(row.definition_version),
    value: json<string | boolean>(row.value),
    reporterKeyId: text(row.reporter_key_id),
    observedAt: text(row.observed_at),
    ingestedAt: text(row.ingested_at),
    revision: Number(row.revision),
    governanceSequence: Number(row.governance_sequence),
    provisional: flag(row.provisional),
    evidenceRef: optionalText(row.evidence_ref),
    evidenceSha256: optionalText(row.evidence_sha256),
    supersedesOutcomeId: optionalText(row.supersedes_outcome_id),
  };
}

/** The identity columns, named alike in the attempts and audit tables. */
function attemptIdentityFromRow(row: Row): AttemptIdentity {
  return {
    projectId: text(row.project_id),
    keyId: text(row.key_id),
    runId: optionalText(row.run_id),
    endpoint: text(row.endpoint),
    alias: text(row.alias),
    connection: text(row.connection),
    profile: text(row.profile),
    upstreamModel: text(row.upstream_model),
  };
}

/** An attempts row (as read before its settlement) and what the settlement committed. */
export function settledAttemptFromRow(row: Row, committedMicrosUsd: number): SettledAttempt {
  return {
    ...attemptIdentityFromRow(row),
    reservationMicrosUsd: Number(row.reservation),
    committedMicrosUsd,
    createdAt: text(row.created_at),
  };
}

export function auditFromRow(row: Row): AuditEntry {
  const inputTokens = optionalNumber(row.input_tokens);
  return {
    sequence: Number(row.sequence),
    attemptId: text(row.attempt_id),
    ...attemptIdentityFromRow(row),
    state: row.state as AttemptState,
    reservationMicrosUsd: Number(row.reservation),
    costMicrosUsd: Number(row.cost),
    usage:
      inputTokens === null
        ? null
        : {
            inputTokens,
            outputTokens: Number(row.output_tokens),
            cacheCreationInputTokens: Number(row.cache_creation_input_tokens),
            cacheReadInputTokens: Number(row.cache_read_input_tokens),
          },
    outcome: text(row.outcome) as SettlementOutcome,
    httpStatus: optionalNumber(row.http_status),
    durationMs: Number(row.duration_ms),
    overran: flag(row.overran),
    createdAt: text(row.created_at),
    settledAt: text(row.settled_at),
    workUnitId: optionalText(row.work_unit_id),
    tags: optionalJson<Attributes>(row.tags),
    metadata: optionalJson<Attributes>(row.metadata),
    route: optionalJson<AttemptRoute>(row.route),
    callId: optionalText(row.call_id),
    firstByteMs: optionalNumber(row.first_byte_ms),
    upstreamRequestId: optionalText(row.upstream_request_id),
    traceId: optionalText(row.trace_id),
  };
}

/**
 * A row of the request log (request-log-sql.ts): an audit entry, or an open attempt under the
 * audit trail's column names (its settlement's columns absent).
 */
export function loggedAttemptFromRow(row: Row): LoggedAttempt {
  const settled = row.settled_at !== undefined && row.settled_at !== null;
  const entry = settled ? auditFromRow(row) : undefined;
  return {
    attemptId: text(row.attempt_id),
    callId: optionalText(row.call_id),
    ...attemptIdentityFromRow(row),
    workUnitId: optionalText(row.work_unit_id),
    state: row.state as AttemptState,
    outcome: entry ? entry.outcome : null,
    httpStatus: entry ? entry.httpStatus : null,
    reservationMicrosUsd: Number(row.reservation),
    costMicrosUsd: entry ? entry.costMicrosUsd : null,
    usage: entry ? entry.usage : null,
    tags: optionalJson<Attributes>(row.tags),
    metadata: optionalJson<Attributes>(row.metadata),
    route: optionalJson<AttemptRoute>(row.route),
    firstByteMs: optionalNumber(row.first_byte_ms),
    durationMs: entry ? entry.durationMs : null,
    upstreamRequestId: optionalText(row.upstream_request_id),
    traceId: optionalText(row.trace_id),
    createdAt: text(row.created_at),
    settledAt: entry ? entry.settledAt : null,
  };
}

/** Columns and values of a managed key insert, in the same order on both adapters. */
export const MANAGED_KEY_COLUMNS =
  'id, project_id, secret_hash, scopes, label, created_at, expires_at, models, limits';

export function managedKeyValues(key: NewManagedKey): unknown[] {
  return [
    key.id,
    key.projectId,
    key.secretHash,
    JSON.stringify(key.scopes),
    key.label,
    key.createdAt,
    key.expiresAt,
    key.models === null ? null : JSON.stringify(key.models),
    JSON.stringify(key.limits),
  ];
}

/** A Work Unit's or Run's metadata as both adapters store it (JSON text; JSONB casts it); none: null. */
export function metadataText(metadata: Attributes | null | undefined): string | null {
  return metadata === null || metadata === undefined ? null : JSON.stringify(metadata);
}
