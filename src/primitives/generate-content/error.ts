/**
 * Generate-content errors -> the vendora dialect. HTTP errors carry the Google RPC status body
 * `{error: {code, message, status, details}}`; the HTTP status decides the type and retryability
 * (shared rule) and the upstream message is kept. The wait before a retry comes from the
 * `retry-after` header when present, else from a `google.rpc.RetryInfo` detail (`retryDelay`
 * "34.4s", rounded up to whole seconds). Inside a stream, an `{error}` object maps by its code.
 */
import type { ErrorType } from '../../canonical/types.js';
import { errorTypeForStatus, headerValue, isRetryableStatus } from '../shared/error-status.js';
import type { UpstreamErrorInfo } from '../shared/types.js';
import { isRecord } from './response.js';

export function mapGenerateContentError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const info: UpstreamErrorInfo = {
    status,
    type: errorTypeForStatus(status),
    message: errorMessage(status, body, error),
    retryable: isRetryableStatus(status),
  };
  const retryAfter = headerValue(headers, 'retry-after') ?? retryDelay(error?.details);
  if (retryAfter !== undefined) info.retryAfter = retryAfter;
  return info;
}

function errorMessage(status: number, body: unknown, error: Record<string, unknown> | undefined): string {
  if (error !== undefined && typeof error.message === 'string' && error.message.length > 0) {
    return typeof error.status === 'string' ? `${error.message} (${error.status})` : error.message;
  }
  if (typeof body === 'string' && body.trim().length > 0) return body.trim().slice(0, 500);
  return `upstream answered HTTP ${status}`;
}

function retryDelay(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isRecord(detail) || detail['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo') continue;
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay) : null;
    if (match?.[1] !== undefined) return String(Math.ceil(Number(match[1])));
  }
  return undefined;
}

const RPC_STATUS_TYPES: Record<string, ErrorType> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  NOT_FOUND: 'not_found_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
  UNAVAILABLE: 'overloaded_error',
};

/** A mid-stream `{error: {code, message, status}}` -> vendora error type (by code, else by status). */
export function streamErrorType(error: { code?: unknown; status?: unknown }): ErrorType {
  if (typeof error.code === 'number' && error.code >= 400) return errorTypeForStatus(error.code);
  if (typeof error.status === 'string' && Object.hasOwn(RPC_STATUS_TYPES, error.status)) {
    return RPC_STATUS_TYPES[error.status] ?? 'api_error';
  }
  return 'api_error';
}
