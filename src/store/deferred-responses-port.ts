/**
 * Deferred responses (store sub-port): `POST /v1/responses` with `background: true`. The record
 * keeps what the client reads (status, usage, error, times) and the keys of its two sealed objects
 * (request, result); the body of the answer lives only in the sealed result object. Every state
 * change is a conditional update on the current status, so a cancel racing the job has one winner.
 * Times are epoch milliseconds.
 */

export type DeferredStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';

export const FINISHED_STATUSES: readonly DeferredStatus[] = [
  'completed',
  'failed',
  'cancelled',
  'incomplete',
];

export interface DeferredError {
  code: string;
  message: string;
}

export interface DeferredUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface DeferredResponseRecord {
  id: string;
  projectId: string;
  keyId: string;
  runId: string | null;
  connection: string;
  /** The alias the client asked for (reported as `model`). */
  model: string;
  upstreamModel: string;
  status: DeferredStatus;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  error: DeferredError | null;
  usage: DeferredUsage | null;
  requestObject: string;
  resultObject: string | null;
  /** Price of the alias target (micro-USD per million tokens), to settle from the usage. */
  price: {
    inputPerMtok: number;
    outputPerMtok: number;
    cacheWritePerMtok: number;
    cacheReadPerMtok: number;
    requestFee: number;
  };
  attemptId: string;
  reservationMicrosUsd: number;
  /** Set by the first successful GET of a finished response. */
  firstReadAt: number | null;
  /** When the record is reaped: created + 24 h, or first read of a finished response + 15 min. */
  reapAt: number;
}

export type DeferredPatch = Partial<
  Pick<
    DeferredResponseRecord,
    | 'status'
    | 'startedAt'
    | 'completedAt'
    | 'error'
    | 'usage'
    | 'resultObject'
    | 'firstReadAt'
    | 'reapAt'
    // A fallback to the next target of the alias moves the response to that target's attempt.
    | 'connection'
    | 'upstreamModel'
    | 'price'
    | 'attemptId'
    | 'reservationMicrosUsd'
  >
>;

export interface DeferredResponsesRepository {
  /** Inserts the record and its job (due at `jobRunAfter`) in one transaction. */
  create(record: DeferredResponseRecord, jobRunAfter: number): Promise<void>;
  get(projectId: string, id: string): Promise<DeferredResponseRecord | undefined>;
  getById(id: string): Promise<DeferredResponseRecord | undefined>;
  /** Conditional update: applied only when the stored status is one of `fromStatuses`. */
  update(
    id: string,
    fromStatuses: readonly DeferredStatus[],
    patch: DeferredPatch,
  ): Promise<DeferredResponseRecord | undefined>;
  /** Deletes a finished record; returns it, or undefined when it was not (or no longer) finished. */
  deleteFinished(projectId: string, id: string): Promise<DeferredResponseRecord | undefined>;
  /** Records due for reaping (reap_at <= now). */
  listDue(now: number, limit: number): Promise<DeferredResponseRecord[]>;
  /** Deletes the record whatever its state (the reaper). */
  delete(id: string): Promise<void>;
}
