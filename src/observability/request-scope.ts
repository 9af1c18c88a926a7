/**
 * What one inbound request did, gathered while it runs and written as its one log line when it
 * ends. The HTTP hooks make the record when the request arrives (http-hooks.ts); it is then handed
 * on explicitly: the authenticator puts it on the Caller, the use cases put the Caller's record on
 * each attempt's plan, and the attempt runner, the rate limits and the observer write to it.
 * Background work has none. No AsyncLocalStorage: on Node 20 one active store makes every promise
 * of the process pay an async-hook call (about a tenth of a call's CPU, docs/performance.md).
 */

import type { RateLimitName, RateScope } from '../limits/rate-limit-scope.js';
import type { AttemptTokens, SettlementOutcome } from '../money/settlement.js';
import type { Attributes, RouteSkipped, RouteTried } from '../store/records.js';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/;
const ZERO_TRACE = '0'.repeat(32);

/** The trace id of a W3C `traceparent` header, or null when absent or malformed. */
export function traceIdOf(traceparent: string | string[] | undefined): string | null {
  if (typeof traceparent !== 'string') return null;
  const id = TRACEPARENT.exec(traceparent.trim().toLowerCase())?.[1];
  return id === undefined || id === ZERO_TRACE ? null : id;
}

export interface RequestRecord {
  projectId: string | null;
  keyId: string | null;
  runId: string | null;
  alias: string | null;
  connection: string | null;
  /** The last attempt started (the one that answered, when one did). */
  attemptId: string | null;
  attempts: number;
  /**
   * Every attempt the ledger reserved for this request, in order (the ledger writes it whatever
   * observes; body capture files the call under each of them). Null until the first.
   */
  attemptIds: string[] | null;
  tokens: AttemptTokens | null;
  /** Committed micro-USD over every attempt of the request. */
  costMicrosUsd: number;
  outcome: SettlementOutcome | null;
  errorCode: string | null;
  /** Governance writes: the id of the resource created or changed, when known. */
  resourceId: string | null;
  /** The rate limit that refused this request, if one did. */
  rateLimit: RateLimitName | null;
  /** The routing span of this request, opened by the first attempt (tracing on only). */
  routeSpan: unknown;
  /** The inference rate-limit state of a /v1 request (limits/rate-limit-scope.ts); null elsewhere. */
  rate: RateScope | null;
  /** The id every attempt of this request shares (the request log's call_id), made by its first attempt. */
  callId: string | null;
  /** The model call's tags (`Svc-Tags`, governance/attributes.ts); null when none were sent. */
  tags: Attributes | null;
  /** The trace this request belongs to: its span's, or the inbound `traceparent`'s with tracing off. */
  traceId: string | null;
  /** Targets routing skipped and attempts that failed so far (each attempt's `route` in the log). */
  routeSkipped: RouteSkipped[];
  routeTried: RouteTried[];
}

export function newRequestRecord(): RequestRecord {
  return {
    projectId: null,
    keyId: null,
    runId: null,
    alias: null,
    connection: null,
    attemptId: null,
    attempts: 0,
    attemptIds: null,
    tokens: null,
    costMicrosUsd: 0,
    outcome: null,
    errorCode: null,
    resourceId: null,
    rateLimit: null,
    routeSpan: undefined,
    rate: null,
    callId: null,
    tags: null,
    traceId: null,
    routeSkipped: [],
    routeTried: [],
  };
}

/** Called by authentication: who is calling (never the secret). */
export function noteCaller(record: RequestRecord | undefined, projectId: string, keyId: string): void {
  if (record) {
    record.projectId = projectId;
    record.keyId = keyId;
  }
}

/** Called by the ledger once an attempt's reservation is stored. */
export function noteAttemptReserved(record: RequestRecord | undefined, attemptId: string): void {
  if (!record) return;
  if (record.attemptIds) record.attemptIds.push(attemptId);
  else record.attemptIds = [attemptId];
}
