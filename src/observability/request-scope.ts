/**
 * What one inbound request did, gathered while it runs and written as its one log line when it
 * ends. The HTTP hooks open the scope (AsyncLocalStorage) around the route handler; the attempt
 * observer and the authenticator add to it from wherever they run inside that handler.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttemptTokens, SettlementOutcome } from '../ledger/attempt-observer.js';

export interface RequestRecord {
  projectId: string | null;
  keyId: string | null;
  runId: string | null;
  alias: string | null;
  connection: string | null;
  /** The last attempt started (the one that answered, when one did). */
  attemptId: string | null;
  attempts: number;
  tokens: AttemptTokens | null;
  /** Committed micro-USD over every attempt of the request. */
  costMicrosUsd: number;
  outcome: SettlementOutcome | null;
  errorCode: string | null;
  /** Governance writes: the id of the resource created or changed, when known. */
  resourceId: string | null;
  /** The routing span of this request, opened by the first attempt (tracing on only). */
  routeSpan: unknown;
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
    tokens: null,
    costMicrosUsd: 0,
    outcome: null,
    errorCode: null,
    resourceId: null,
    routeSpan: undefined,
  };
}

const scope = new AsyncLocalStorage<RequestRecord>();

export function runInRequestScope<T>(record: RequestRecord, fn: () => T): T {
  return scope.run(record, fn);
}

/** The record of the request running now, if any (background work has none). */
export function currentRequest(): RequestRecord | undefined {
  return scope.getStore();
}

/** Called by authentication: who is calling (never the secret). */
export function noteCaller(projectId: string, keyId: string): void {
  const record = scope.getStore();
  if (record) {
    record.projectId = projectId;
    record.keyId = keyId;
  }
}
