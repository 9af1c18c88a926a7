/**
 * What the attempt runner tells the rest of the process about each upstream attempt, so metrics,
 * traces and log lines are fed from the one place money moves (DESIGN.md section 4), never from a
 * second copy of the bookkeeping.
 *
 * The runner calls, for every attempt it starts:
 *   refused(...)                    the reservation was not admitted (nothing was called)
 *   or started(...) -> AttemptWatch the reservation was admitted; then, on the watch:
 *        within(fn)                 runs the upstream call with this attempt as the active context
 *                                   (so a tracer can propagate `traceparent` to the upstream)
 *        firstByte()                the first byte of the answer arrived (time to first token)
 *        settled(...)               exactly once, after the settlement is durable (or given up to
 *                                   the reaper: outcome lease_expired is then reported by the reaper)
 * and, per routing decision, routedAway(...) and fallback(...).
 *
 * An attempt held by a background resource (a batch, a deferred response) may be settled by
 * another process, after a restart, hours later; it has no watch. Instead:
 *   held(...)                       the reservation was admitted (in the reserving process)
 *   settledHeld(...)                once, in whichever process settled it, after the settlement is
 *                                   durable; labels and amounts are read back from the stored
 *                                   attempt in the settling transaction, so they equal the audit entry
 *
 * `request` is the record of the client request the attempt serves (its log line), handed on
 * explicitly from the HTTP layer through the attempt's plan; background work has none.
 *
 * Observers must be cheap and must never throw into the request path.
 */

import type { SkipCode } from '../catalogue/eligibility.js';
import type { AttemptTokens, SettlementOutcome } from '../money/settlement.js';
import type { AttemptIdentity } from '../store/port.js';
import type { RequestRecord } from './request-scope.js';

/** Why routing skipped a target: a fixed code (catalogue/eligibility.ts SKIP_CODES), never free text. */
export type RoutedAwayReason = SkipCode;

/** Why a reservation was not admitted. */
export type RefusalReason =
  | 'run_budget_exceeded'
  | 'run_not_active'
  | 'run_not_found'
  | 'key_budget_exceeded'
  | 'project_budget_exceeded'
  | 'rate_limited'
  | 'rate_limits_unavailable'
  | 'store_busy'
  | 'store_unavailable';

/**
 * Bounded, configuration-derived identity of an attempt (safe as metric labels except runId, which
 * is logs and spans only; endpoint is for example `messages`, `count_tokens`, `batches`; profile a
 * profile id such as `vendora.messages.2023-06-01`).
 */
export interface AttemptLabels extends AttemptIdentity {
  /** The wire primitive: `messages` | `chat-completions` | `responses` | `generate-content`. */
  primitive: string;
  streamed: boolean;
}

export interface AttemptSettled {
  outcome: SettlementOutcome;
  costMicrosUsd: number;
  reservationMicrosUsd: number;
  tokens: AttemptTokens | null;
  /** The upstream's HTTP status when one was received. */
  httpStatus: number | null;
  /**
   * The failure as the runner names it (`timeout`, `http_503`, `local_client`, `stream_incomplete`,
   * a background job's reason...); observers report its class (observability/attempt-series.ts).
   */
  errorType: string | null;
  /** The model the upstream says answered, when it said. */
  responseModel: string | null;
  durationMs: number;
}

export interface AttemptWatch {
  within<T>(fn: () => T): T;
  firstByte(): void;
  settled(result: AttemptSettled): void;
}

export interface AttemptObserver {
  started(
    attemptId: string,
    labels: AttemptLabels,
    reservationMicrosUsd: number,
    request: RequestRecord | undefined,
  ): AttemptWatch;
  refused(
    labels: Omit<AttemptLabels, 'connection' | 'profile' | 'primitive' | 'upstreamModel'> &
      Partial<AttemptLabels>,
    reason: RefusalReason,
  ): void;
  /** A background attempt was reserved (admitted); settledHeld reports its settlement later. */
  held(
    attemptId: string,
    labels: AttemptLabels,
    reservationMicrosUsd: number,
    request: RequestRecord | undefined,
  ): void;
  /** A background attempt's settlement became durable (exactly once per attempt, in any process). */
  settledHeld(
    attemptId: string,
    labels: AttemptLabels,
    reservedAtMs: number,
    result: AttemptSettled,
    request: RequestRecord | undefined,
  ): void;
  routedAway(
    alias: string,
    connection: string,
    reason: RoutedAwayReason,
    request: RequestRecord | undefined,
  ): void;
  fallback(
    alias: string,
    fromConnection: string,
    toConnection: string,
    errorType: string,
    request: RequestRecord | undefined,
  ): void;
  /** The reaper committed attempts whose lease passed. */
  leaseExpired(count: number): void;
}

const quietWatch: AttemptWatch = {
  within: (fn) => fn(),
  firstByte: () => {},
  settled: () => {},
};

/** The observer when nothing observes: no allocation per attempt. */
export const noAttemptObserver: AttemptObserver = {
  started: () => quietWatch,
  refused: () => {},
  held: () => {},
  settledHeld: () => {},
  routedAway: () => {},
  fallback: () => {},
  leaseExpired: () => {},
};

/** Several observers as one: each is told everything, in order (metrics and traces, refusal records). */
export function combineObservers(...observers: AttemptObserver[]): AttemptObserver {
  const [only] = observers;
  if (observers.length === 1 && only) return only;
  return {
    started(attemptId, labels, reservation, request) {
      const watches = observers.map((observer) => observer.started(attemptId, labels, reservation, request));
      return {
        within: (fn) =>
          watches.reduceRight<() => ReturnType<typeof fn>>((inner, watch) => () => watch.within(inner), fn)(),
        firstByte: () => {
          for (const watch of watches) watch.firstByte();
        },
        settled: (result) => {
          for (const watch of watches) watch.settled(result);
        },
      };
    },
    refused: (labels, reason) => {
      for (const observer of observers) observer.refused(labels, reason);
    },
    held: (attemptId, labels, reservation, request) => {
      for (const observer of observers) observer.held(attemptId, labels, reservation, request);
    },
    settledHeld: (attemptId, labels, reservedAtMs, result, request) => {
      for (const observer of observers)
        observer.settledHeld(attemptId, labels, reservedAtMs, result, request);
    },
    routedAway: (alias, connection, reason, request) => {
      for (const observer of observers) observer.routedAway(alias, connection, reason, request);
    },
    fallback: (alias, from, to, errorType, request) => {
      for (const observer of observers) observer.fallback(alias, from, to, errorType, request);
    },
    leaseExpired: (count) => {
      for (const observer of observers) observer.leaseExpired(count);
    },
  };
}
