/**
 * The request log sub-port of the store (Store.requestLog): a Project's attempts read from the audit
 * trail (settled ones) and the attempts table (open ones, reserved and not settled yet), newest
 * first by (created_at, attempt id), with keyset paging. Every attempt appears once: its audit entry
 * once it has one, its open row before that.
 */
import type { AttemptUsage, SettlementOutcome } from '../money/settlement.js';
import type { AttemptRoute, AttemptState, Attributes } from './records.js';
import type { CreatedPosition } from './reports-port.js';

/** One attempt as the log shows it; the settlement's fields are null while it is open. */
export interface LoggedAttempt {
  attemptId: string;
  callId: string | null;
  projectId: string;
  keyId: string;
  runId: string | null;
  workUnitId: string | null;
  endpoint: string;
  alias: string;
  connection: string;
  profile: string;
  upstreamModel: string;
  state: AttemptState;
  outcome: SettlementOutcome | null;
  httpStatus: number | null;
  reservationMicrosUsd: number;
  costMicrosUsd: number | null;
  usage: AttemptUsage | null;
  tags: Attributes | null;
  metadata: Attributes | null;
  route: AttemptRoute | null;
  firstByteMs: number | null;
  durationMs: number | null;
  upstreamRequestId: string | null;
  traceId: string | null;
  createdAt: string;
  settledAt: string | null;
}

export interface AttemptLogQuery {
  projectId: string;
  /** Inclusive lower and exclusive upper bound on the attempt's created_at (RFC 3339, UTC ms). */
  from?: string;
  to?: string;
  keyId?: string;
  alias?: string;
  connection?: string;
  upstreamModel?: string;
  runId?: string;
  workUnitId?: string;
  /** Settlement filters: an open attempt has neither, so either one leaves the open attempts out. */
  outcome?: SettlementOutcome;
  httpStatus?: number;
  tags?: Attributes;
  metadata?: Attributes;
  /** Rows strictly after this position in the log's order (created_at DESC, attempt id DESC). */
  after?: CreatedPosition;
  limit: number;
}

export interface RequestLogRepository {
  /** Up to `limit` attempts in the log's order (open ones included). */
  list(query: AttemptLogQuery): Promise<LoggedAttempt[]>;
  /** One attempt of the Project (settled or open); undefined when unknown or another Project's. */
  get(projectId: string, attemptId: string): Promise<LoggedAttempt | undefined>;
}
