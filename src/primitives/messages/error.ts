/**
 * Messages-wire HTTP errors -> the vendora dialect. The body is already this dialect:
 * `{"type":"error","error":{"type","message"},"request_id"}`. Its `error.type` is kept when it is one
 * of the canonical types (it is the upstream's own, more precise word, e.g. overloaded_error on a
 * 500); wire types outside the canonical set (billing_error, request_too_large, timeout_error, ...)
 * fall back to the status rule. Retryability always follows the status; retry-after is passed on.
 */
import type { ErrorType } from '../../canonical/types.js';
import { errorTypeForStatus, headerValue, isRetryableStatus } from '../shared/error-status.js';
import type { UpstreamErrorInfo } from '../shared/types.js';
import { isRecord } from './usage.js';

const CANONICAL_TYPES: ReadonlySet<string> = new Set<ErrorType>([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);

export function mapMessagesError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  const error = errorObject(body);
  const type =
    error !== undefined && typeof error.type === 'string' && CANONICAL_TYPES.has(error.type)
      ? (error.type as ErrorType)
      : errorTypeForStatus(status);
  const info: UpstreamErrorInfo = {
    status,
    type,
    message: errorMessage(status, body, error),
    retryable: isRetryableStatus(status),
  };
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter !== undefined) info.retryAfter = retryAfter;
  return info;
}

/** `body.error` of a parsed body, or of a JSON text body. */
function errorObject(body: unknown): Record<string, unknown> | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return isRecord(value) && isRecord(value.error) ? value.error : undefined;
}

function errorMessage(status: number, body: unknown, error: Record<string, unknown> | undefined): string {
  if (error !== undefined && typeof error.message === 'string' && error.message.length > 0)
    return error.message;
  if (typeof body === 'string' && body.trim().length > 0) return body.trim().slice(0, 500);
  return `upstream answered HTTP ${status}`;
}
