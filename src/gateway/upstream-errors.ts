/**
 * An upstream that failed -> the GatewayError the client sees, and the attempt settled for it:
 *   connect failure (nothing was sent)   released                      upstream_unavailable
 *   timeout                              unknown (it may have billed)  upstream_timeout
 *   other transport failure              unknown (it may have billed)  upstream_unavailable
 *   upstream answered an error status    settled at 0 (not billed)     upstream_error with the
 *                                                                      upstream's status, type and
 *                                                                      retry-after
 * An answer that came with a 2xx but cannot be read (or carries no usage) is settled unknown: the
 * upstream may have billed. Each caller words that error itself, since what it could not read
 * differs per endpoint.
 */
import type { ErrorType } from '../canonical/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Attempt } from '../ledger/ledger.js';
import type { UpstreamFailure } from '../primitives/shared/upstream-call.js';

export function transportError(failure: UpstreamFailure): GatewayError {
  return new GatewayError(
    failure.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable',
    failure.message,
  );
}

/** Settles the attempt for a transport failure (a caught callUpstream error) and gives its error. */
export async function settleTransportFailure(attempt: Attempt, error: unknown): Promise<GatewayError> {
  const failure = error as UpstreamFailure;
  await attempt.settle({
    state: failure.kind === 'connect' ? 'released' : 'unknown',
    costMicrosUsd: 0,
    usage: null,
    outcome: `transport_${failure.kind}`,
    httpStatus: null,
  });
  return transportError(failure);
}

/** What a primitive's mapError made of an error status (its UpstreamErrorInfo). */
export interface UpstreamStatusInfo {
  status: number;
  message: string;
  /** Absent: the error code's catalogue type. */
  type?: ErrorType | undefined;
  retryAfter?: string | undefined;
}

export function upstreamStatusError(info: UpstreamStatusInfo): GatewayError {
  return new GatewayError('upstream_error', info.message, {
    status: info.status,
    ...(info.type !== undefined ? { type: info.type } : {}),
    ...(info.retryAfter !== undefined ? { retryAfter: info.retryAfter } : {}),
  });
}

/** Settles the attempt at 0 for an error status `httpStatus` (not billed) and gives its error. */
export async function settleUpstreamStatus(
  attempt: Attempt,
  httpStatus: number,
  info: UpstreamStatusInfo,
): Promise<GatewayError> {
  await attempt.settle({
    state: 'settled',
    costMicrosUsd: 0,
    usage: null,
    outcome: `upstream_${httpStatus}`,
    httpStatus,
  });
  return upstreamStatusError(info);
}

/** Settles the attempt unknown for a 2xx answer that could not be read (the whole reservation is committed). */
export function settleUnreadableAnswer(attempt: Attempt, httpStatus: number): Promise<void> {
  return attempt.settle({
    state: 'unknown',
    costMicrosUsd: 0,
    usage: null,
    outcome: 'unreadable_answer',
    httpStatus,
  });
}
