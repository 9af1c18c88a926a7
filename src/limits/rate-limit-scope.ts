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

/**
 * Every rate limit that can refuse a request, and the surface it guards: the `limit` and `surface`
 * labels of svc_rate_limit_refusals_total (a closed list, so the label stays bounded). A new limit
 * adds its name here and calls noteRateLimited(name) where it refuses.
 */
export const RATE_LIMITS = {
  /** The per-(Project, key) token bucket in front of every /svc/v1 route. */
  governance_requests: 'governance',
  /** Inference rate limits (inference-limits.ts): a key's or a Project's requests or tokens per minute. */
  key_requests: 'inference',
  key_tokens: 'inference',
  project_requests: 'inference',
  project_tokens: 'inference',
} as const satisfies Record<string, 'governance' | 'inference'>;

export type RateLimitName = keyof typeof RATE_LIMITS;

/**
 * What the rate limits write on the client request's record (observability/request-scope.ts
 * RequestRecord, which has these fields): its rate scope and the limit that refused it.
 */
export interface RateLimitedRequest {
  rate: RateScope | null;
  rateLimit: RateLimitName | null;
}

/** Called where a rate limit refuses the request (counted once, when it ends). */
export function noteRateLimited(record: RateLimitedRequest | undefined, limit: RateLimitName): void {
  if (record) record.rateLimit = limit;
}
