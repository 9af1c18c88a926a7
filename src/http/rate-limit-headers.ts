/**
 * The inference rate-limit headers (limits/inference-limits.ts), on every /v1 answer whose caller
 * has a limit, success or refusal, as the vendors send them:
 *   vendora dialect (/v1/messages, count_tokens): vendora-ratelimit-{requests,tokens}-{limit,remaining,reset},
 *     reset as an RFC 3339 instant (when the bucket is full again);
 *   vendorb dialect (every other /v1 endpoint): x-ratelimit-{limit,remaining,reset}-{requests,tokens},
 *     reset as a duration (`250ms`, `12s`, `1m0s`).
 * A refusal also carries `svc-rate-limited` naming the limit (`key_requests`, `key_tokens`,
 * `project_requests`, `project_tokens`) next to its Retry-After.
 * The state comes from the request's rate scope, given here to each /v1 request's record
 * (observability/request-scope.ts), which carries it to admission.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { dialectOf } from '../errors/render.js';
import { isoTime } from '../lib/clock.js';
import { type LimitState, newRateScope, type RateScope } from '../limits/rate-limit-scope.js';
import { requestRecordOf } from '../observability/http-hooks.js';

/** A duration as vendorb writes it: `250ms`, `1.5s`, `1m0s`. */
export function vendorbDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = Number(((whole % 60_000) / 1000).toFixed(3));
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** An RFC 3339 instant to the second (rounded up), as vendora writes it. */
function vendoraInstant(nowMs: number, inMs: number): string {
  return `${isoTime(Math.ceil((nowMs + inMs) / 1000) * 1000).slice(0, 19)}Z`;
}

/** The headers of the request's rate scope in the dialect of `path` (none when no limit applied). */
export function rateLimitHeaders(
  path: string,
  scope: RateScope | null,
  nowMs: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!scope?.state) return headers;
  const vendora = dialectOf(path) === 'vendora';
  const add = (kind: 'requests' | 'tokens', limit: LimitState | undefined) => {
    if (!limit) return;
    if (vendora) {
      headers[`vendora-ratelimit-${kind}-limit`] = String(limit.limit);
      headers[`vendora-ratelimit-${kind}-remaining`] = String(limit.remaining);
      headers[`vendora-ratelimit-${kind}-reset`] = vendoraInstant(nowMs, limit.fullInMs);
    } else {
      headers[`x-ratelimit-limit-${kind}`] = String(limit.limit);
      headers[`x-ratelimit-remaining-${kind}`] = String(limit.remaining);
      headers[`x-ratelimit-reset-${kind}`] = vendorbDuration(limit.fullInMs);
    }
  };
  add('requests', scope.state.requests);
  add('tokens', scope.state.tokens);
  if (scope.refusedBy) headers['svc-rate-limited'] = scope.refusedBy;
  return headers;
}

/**
 * The headers for the request now (for answers written straight to the socket: streams). The
 * dialect is the matched route's (its pattern has no query string); a request has a rate scope
 * only once a /v1 route matched.
 */
export function rateLimitHeadersOf(request: FastifyRequest): Record<string, string> {
  const path = request.routeOptions.url ?? request.url.split('?')[0]!;
  return rateLimitHeaders(path, requestRecordOf(request)?.rate ?? null, Date.now());
}

export function registerRateLimitHeaders(app: FastifyInstance): void {
  // After the observability hooks (registered before these) made the request's record.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.url.startsWith('/v1/')) return done();
    const record = requestRecordOf(request);
    if (record) record.rate = newRateScope();
    done();
  });
  // Callback style, like the other per-request hooks: no promise per /v1 answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (requestRecordOf(request)?.rate?.state) reply.headers(rateLimitHeadersOf(request));
    done(null, payload);
  });
}
