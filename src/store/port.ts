/**
 * The store port: domain operations, not SQL. Each operation is one transaction on either adapter
 * (SQLite, PostgreSQL); the same contract suite (store/contract/) runs unchanged against both.
 *
 * Invariants the adapters keep:
 * - Budget admission is one conditional update on the Run row:
 *   committed + reserved + amount <= budget AND status = 'active' AND expires_at > now.
 * - A reservation is released only when it is certain nothing reached the upstream; an attempt
 *   whose cost cannot be known is committed at its full reservation and counted in unknown_attempts.
 * - Governance writes with an idempotency key store their response in the same transaction.
 */

import type { Limiter } from '../limits/limiter.js';
import type { AttemptUsage, SettlementOutcome } from '../money/settlement.js';
import type { SpendCaps } from '../money/spend-caps.js';
import type { BatchesRepository } from './batches-port.js';
import type { DeferredResponsesRepository } from './deferred-responses-port.js';
import type { FilesRepository } from './files-port.js';
import type { JobsRepository } from './jobs-port.js';
import type { KeysRepository } from './keys-port.js';
import type {
  AttemptAttribution,
  AttemptIdentity,
  AttemptState,
  AuditEntry,
  FrozenDefinition,
  Idempotency,
  IdempotentResult,
  KeyRecord,
  NewKey,
  Outcome,
  OutcomeDefinition,
  Render,
  Run,
  WorkUnit,
} from './records.js';
import type { ReportsRepository } from './reports-port.js';
import type { RequestLogRepository } from './request-log-port.js';

/** The shared records (records.ts) are part of the port. */
export type * from './records.js';

export interface CreateWorkUnitInput {
  workUnit: WorkUnit;
}

export interface CloseWorkUnitInput {
  projectId: string;
  id: string;
  closedAt: string;
}

export interface CreateRunInput {
  run: Run;
  maxRunsPerWorkUnit: number;
}

export interface CloseRunInput {
  projectId: string;
  id: string;
  reason: string;
  closedAt: string;
}

export interface ReportOutcomeInput {
  /** The new record; version, revision, sequence and provisional are assigned in the write. */
  outcome: Omit<Outcome, 'definitionVersion' | 'revision' | 'governanceSequence' | 'provisional'>;
  maxRevisions: number;
  /** Milliseconds after the Work Unit closed during which writes are accepted. */
  writeWindowMs: number;
  /**
   * Validates the value against the definition frozen on the Work Unit and returns its version;
   * throws GatewayError('invalid_outcome').
   */
  checkDefinition(definition: FrozenDefinition | undefined): number;
}

export interface WorkUnitView {
  workUnit: WorkUnit;
  runs: Run[];
  outcomes: Outcome[];
}

// ---- ledger --------------------------------------------------------------------------------

export interface ReserveInput {
  attemptId: string;
  projectId: string;
  keyId: string;
  /** null: the call is not attached to a Run; the attempt is still recorded (no budget). */
  runId: string | null;
  reservationMicrosUsd: number;
  /**
   * The Project's spend caps (configuration). The key's caps are read from its row in the same
   * transaction. Every cap that applies is admitted with the Run, atomically (money/spend-caps.ts).
   */
  projectCaps?: SpendCaps;
  /** Epoch ms; used to decide whether the Run has expired and which cap windows the call counts in. */
  now: number;
  createdAt: string;
  leaseExpiresAt: string;
  owner: string;
  endpoint: string;
  alias: string;
  connection: string;
  profile: string;
  upstreamModel: string;
  /** The call, tags, route and trace the attempt serves (absent: none known). */
  attribution?: AttemptAttribution;
}

export interface SettleInput {
  attemptId: string;
  /** 'settled': cost known; 'unknown': commit the full reservation; 'released': nothing reached the upstream. */
  state: Exclude<AttemptState, 'reserved'>;
  costMicrosUsd: number;
  usage: AttemptUsage | null;
  /** One outcome of the union (money/settlement.ts); stored in the attempt and audit rows. */
  outcome: SettlementOutcome;
  httpStatus: number | null;
  durationMs: number;
  settledAt: string;
  /** Milliseconds from the reservation to the answer's first byte (null: none arrived). */
  firstByteMs?: number | null;
  /** The upstream's own id of the request (its `request-id` / `x-request-id` header). */
  upstreamRequestId?: string | null;
}

/**
 * An attempt settled by the store's own sweep, not by its call: the reaper's full commits (outcome
 * lease_expired) and the release of a reservation in doubt (outcome not_sent, releaseInDoubt).
 */
export interface ReapedAttempt extends SettledAttempt {
  attemptId: string;
  durationMs: number;
}

/** An attempt as one settlement left it: who and what it was, and what the settlement committed. */
export interface SettledAttempt extends AttemptIdentity {
  reservationMicrosUsd: number;
  /** What the settlement committed (the audit entry's cost). */
  committedMicrosUsd: number;
  /** RFC 3339: when the attempt was reserved. */
  createdAt: string;
}

export interface AuditQuery {
  projectId?: string;
  runId?: string;
  afterSequence?: number;
  limit: number;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** File metadata (files-port.ts). */
  readonly files: FilesRepository;
  /** Background jobs with leases (jobs-port.ts). */
  readonly jobs: JobsRepository;
  /** Batch records (batches-port.ts). */
  readonly batches: BatchesRepository;
  /** Deferred responses (deferred-responses-port.ts). */
  readonly deferredResponses: DeferredResponsesRepository;
  /** Token buckets shared by every replica on this store (limits/limiter.ts). */
  readonly rateBuckets: Limiter;
  /** Lists and report aggregates (reports-port.ts). */
  readonly reports: ReportsRepository;
  /** Gateway Keys managed over the API and the CLI (keys-port.ts). */
  readonly keys: KeysRepository;
  /** Every attempt of a Project, settled or open (request-log-port.ts). */
  readonly requestLog: RequestLogRepository;
  migrate(): Promise<void>;
  /** Resolves when the store answers a trivial query; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;

  // keys
  createKey(key: NewKey): Promise<void>;
  /**
   * Inserts or updates a key declared in configuration (same id: project, hash, scopes and label
   * replaced). A revocation is never undone here: a revoked configured key stays revoked.
   */
  upsertConfiguredKey(key: NewKey): Promise<void>;
  /** Inserts the key unless one with its id exists (then nothing changes); true when inserted. */
  insertKeyIfAbsent(key: NewKey): Promise<boolean>;
  findKeyByHash(secretHash: string): Promise<KeyRecord | undefined>;
  listKeys(projectId?: string): Promise<KeyRecord[]>;
  /** Returns false when no such key exists. */
  revokeKey(id: string, revokedAt: string): Promise<boolean>;

  // outcome definitions (declared in configuration, synced at start-up, versions kept)
  syncDefinitions(definitions: OutcomeDefinition[]): Promise<void>;
  listDefinitions(projectId: string): Promise<OutcomeDefinition[]>;

  // governance writes (each one transaction; idempotency handled inside it)
  createWorkUnit(
    input: CreateWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult>;
  closeWorkUnit(
    input: CloseWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult>;
  createRun(input: CreateRunInput, idempotency: Idempotency, render: Render<Run>): Promise<IdempotentResult>;
  closeRun(input: CloseRunInput, idempotency: Idempotency, render: Render<Run>): Promise<IdempotentResult>;
  reportOutcome(
    input: ReportOutcomeInput,
    idempotency: Idempotency,
    render: Render<Outcome>,
  ): Promise<IdempotentResult>;
  /** Removes idempotency records older than their expiry; returns how many. */
  pruneIdempotency(nowIso: string): Promise<number>;

  // governance reads
  getWorkUnit(projectId: string, id: string): Promise<WorkUnitView | undefined>;
  getRun(projectId: string, id: string): Promise<Run | undefined>;

  // ledger
  /**
   * Throws GatewayError run_not_found | run_not_active | run_budget_exceeded |
   * project_budget_exceeded | key_budget_exceeded (checked in that order).
   */
  reserve(input: ReserveInput): Promise<void>;
  /** Idempotent per attempt: settling a settled attempt again is a no-op. Writes the audit entry. */
  settle(input: SettleInput): Promise<void>;
  /**
   * settle() for attempts held by a background resource (batch, deferred response), in its own
   * transaction (not group-committed): returns the attempt as this settlement left it, or
   * undefined when it was settled already (the first settlement wins; nothing was written).
   */
  settleAndRead(input: SettleInput): Promise<SettledAttempt | undefined>;
  /** Extends the lease of an attempt still in progress (long streams). */
  renewLease(attemptId: string, leaseExpiresAt: string): Promise<void>;
  /**
   * Commits the full reservation of attempts whose lease passed unsettled, and (when given) of every
   * unsettled attempt not owned by `liveOwner` (SQLite: the previous process died). Returns each
   * attempt as its settlement (outcome lease_expired) left it, for the metrics and the log.
   */
  reapExpiredAttempts(nowIso: string, liveOwner?: string): Promise<ReapedAttempt[]>;
  /**
   * Resolves reservations in doubt: reserve() failed without the store saying whether it committed
   * (the connection died after the statement may have run), and their calls were never sent. In one
   * transaction, per attempt id: a reserved attempt is released (state released, outcome not_sent,
   * nothing committed, its audit entry, the Run's and the spend counters' reservations given back);
   * an absent one gets a tombstone row (released, reservation 0, no Run, no audit entry) so that the
   * reservation, should it still reach the database, conflicts on the id and writes nothing; any
   * other attempt is left alone. Returns the attempts it released.
   */
  releaseInDoubt(inputs: ReserveInput[], settledAt: string): Promise<ReapedAttempt[]>;
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;
}
