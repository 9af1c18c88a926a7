/**
 * The settlement vocabulary: the outcomes an attempt can be settled with, what an upstream
 * reported using, and a Settlement built by one named constructor per outcome. What each outcome
 * commits (the settlement table) is in ledger/attempt-runner.ts; the store's state for an outcome
 * is ledger/ledger.ts stateOf.
 */

/** Every way an attempt can be settled. Metrics, logs, audit rows and reports use exactly these names. */
export const SETTLEMENT_OUTCOMES = [
  /** The upstream answered with usage: its actual cost is committed, the rest released. */
  'completed',
  /** The upstream answered an error before generating: its usage is committed (usually 0). */
  'refused_upstream',
  /** Nothing left this process (serialisation, signing, connect refused): 0 committed. */
  'not_sent',
  /** Sent, but the cost cannot be known (dropped, timed out, client gone): whole reservation. */
  'unknown',
  /** A running deferred response or batch was cancelled: whole reservation. */
  'cancelled_running',
  /** Never settled before its lease passed (process died): the reaper commits the whole reservation. */
  'lease_expired',
] as const;

export type SettlementOutcome = (typeof SETTLEMENT_OUTCOMES)[number];

/** The tokens an attempt used, as the observers and the request's log line report them. */
export interface AttemptTokens {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** The usage an upstream reported, as the store keeps it on the attempt row. */
export interface AttemptUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** How an attempt ended: one outcome of the union, the cost when known, what the upstream said. */
export interface Settlement {
  outcome: SettlementOutcome;
  /** The actual cost (completed, refused_upstream); ignored for the outcomes that commit the reservation. */
  costMicrosUsd: number;
  usage: AttemptUsage | null;
  httpStatus: number | null;
  /** Low-cardinality class of the failure (observer and logs only), for example `timeout`, `http_429`. */
  errorType: string | null;
}

/** One constructor per outcome: the only shapes a settlement takes. */
export const Settlement = {
  /** A 2xx answer whose cost is known: the actual cost is committed. */
  completed(costMicrosUsd: number, usage: AttemptUsage | null, httpStatus: number | null): Settlement {
    return { outcome: 'completed', costMicrosUsd, usage, httpStatus, errorType: null };
  },
  /** The upstream answered an error status: it billed nothing, 0 committed. */
  refusedUpstream(httpStatus: number | null, errorType: string | null): Settlement {
    return { outcome: 'refused_upstream', costMicrosUsd: 0, usage: null, httpStatus, errorType };
  },
  /** Nothing reached the upstream: 0 committed. */
  notSent(errorType: string | null): Settlement {
    return { outcome: 'not_sent', costMicrosUsd: 0, usage: null, httpStatus: null, errorType };
  },
  /** Sent, but the cost cannot be known: the whole reservation is committed (usage kept when read). */
  unknown(
    errorType: string | null,
    httpStatus: number | null = null,
    usage: AttemptUsage | null = null,
  ): Settlement {
    return { outcome: 'unknown', costMicrosUsd: 0, usage, httpStatus, errorType };
  },
  /** A running deferred response or batch was cancelled: the whole reservation is committed. */
  cancelledRunning(errorType: string | null): Settlement {
    return { outcome: 'cancelled_running', costMicrosUsd: 0, usage: null, httpStatus: null, errorType };
  },
  /** Never settled before its lease passed: the whole reservation is committed. */
  leaseExpired(): Settlement {
    return {
      outcome: 'lease_expired',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: 'lease_expired',
    };
  },
};
