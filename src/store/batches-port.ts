/**
 * Batches (store sub-port). A batch row holds the client-visible record (vendorb batch fields),
 * the upstream it was submitted to, the per-line plan (price and worst case of every line, used to
 * settle from the results) and the ledger attempt covering it. Creation writes the batch, its job
 * and the idempotency record in one transaction. Times are epoch milliseconds.
 */
import type { Idempotency, IdempotentResult, Render } from './records.js';

export type BatchStatus =
  | 'validating'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';

/** Which upstream batch API carries the batch. */
export type BatchCarrier = 'message-batches' | 'chat-batches';

export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface BatchRequestCounts {
  total: number;
  completed: number;
  failed: number;
}

/** What one input line costs: its alias target's price and its worst case. */
export interface BatchLinePlan {
  customId: string;
  alias: string;
  upstreamModel: string;
  price: {
    inputPerMtok: number;
    outputPerMtok: number;
    cacheWritePerMtok: number;
    cacheReadPerMtok: number;
    requestFee: number;
  };
  worstCaseMicrosUsd: number;
}

export interface BatchRecord {
  id: string;
  projectId: string;
  keyId: string;
  runId: string | null;
  connection: string;
  carrier: BatchCarrier;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  outputFileId: string | null;
  errorFileId: string | null;
  createdAt: number;
  /** When the batch expires (completion window). */
  expiresAt: number;
  inProgressAt: number | null;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
  metadata: Record<string, string> | null;
  errors: BatchError[] | null;
  requestCounts: BatchRequestCounts;
  /** When the record (and its service-owned output files) is removed: created + 7 days. */
  deleteAfter: number;
  upstreamBatchId: string | null;
  upstreamInputFileId: string | null;
  /** Set durably just before the upstream create call (a crash after it cannot be retried blindly). */
  submitStartedAt: number | null;
  attemptId: string;
  reservationMicrosUsd: number;
  lines: BatchLinePlan[];
}

/** Fields a job or a cancel may change. */
export type BatchPatch = Partial<
  Pick<
    BatchRecord,
    | 'status'
    | 'outputFileId'
    | 'errorFileId'
    | 'inProgressAt'
    | 'finalizingAt'
    | 'completedAt'
    | 'failedAt'
    | 'expiredAt'
    | 'cancellingAt'
    | 'cancelledAt'
    | 'errors'
    | 'requestCounts'
    | 'upstreamBatchId'
    | 'upstreamInputFileId'
    | 'submitStartedAt'
  >
>;

/** A page of a Project's batches, newest first by (created_at, id); records past delete_after are not listed. */
export interface BatchListQuery {
  /** Rows to return (the caller asks one more than it shows to learn has_more). */
  limit: number;
  /** Keyset cursor: only rows older than this one. */
  after?: { createdAt: number; id: string } | undefined;
  now: number;
}

export interface BatchesRepository {
  /** Replays or conflicts on a known idempotency key without writing anything. */
  findIdempotent(idempotency: Idempotency): Promise<IdempotentResult | undefined>;
  /**
   * Inserts the batch, its job (run at `jobRunAfter`) and the idempotency record in one transaction;
   * a key stored meanwhile by a concurrent request is replayed (or conflicts) instead. Without an
   * idempotency key (null), batch and job only.
   */
  create(
    batch: BatchRecord,
    jobRunAfter: number,
    idempotency: Idempotency | null,
    render: Render<BatchRecord>,
  ): Promise<IdempotentResult>;
  /** The batch of this Project, or undefined (other Projects' batches do not exist for the caller). */
  get(projectId: string, id: string): Promise<BatchRecord | undefined>;
  getById(id: string): Promise<BatchRecord | undefined>;
  /**
   * Applies the patch when the stored status is one of `fromStatuses`; returns the record after the
   * update, or undefined when the status did not match (another writer moved it first).
   */
  update(
    id: string,
    fromStatuses: readonly BatchStatus[],
    patch: BatchPatch,
  ): Promise<BatchRecord | undefined>;
  list(projectId: string, query: BatchListQuery): Promise<BatchRecord[]>;
  /** Batches whose delete_after has passed (for the sweeper). */
  listExpired(now: number, limit: number): Promise<BatchRecord[]>;
  delete(id: string): Promise<void>;
}
