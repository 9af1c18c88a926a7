/**
 * The inference rate-limit state of one client request (carried by the request's record,
 * observability/request-scope.ts, which the HTTP layer gives every /v1 request and the attempt's
 * plan hands to admission): admission (inference-limits.ts) writes what the binding limits look
 * like after it, and whether the request's one request unit is taken; the HTTP layer renders it as
 * the dialect's rate-limit headers on the answer, success or refusal. Background work has no
 * scope: nothing is rendered and every attempt counts as a request.
 */

/** One limit as the headers tell it: its size per minute, what is left, when it is full again. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  fullInMs: number;
}

/** The binding limit of each kind after the last admission (absent: no such limit applies). */
export interface RateLimitState {
  requests?: LimitState;
  tokens?: LimitState;
}

export interface RateScope {
  /** Whether this client request already took its request unit (a fallback attempt takes none). */
  requestCounted: boolean;
  state: RateLimitState | undefined;
  /** The limit that refused the request: `key_requests`, `key_tokens`, `project_requests`, `project_tokens`. */
  refusedBy: string | undefined;
}

export function newRateScope(): RateScope {
  return { requestCounted: false, state: undefined, refusedBy: undefined };
}
