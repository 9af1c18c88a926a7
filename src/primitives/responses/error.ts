/**
 * Responses wire errors -> the vendora dialect. HTTP errors carry the vendorb body
 * `{error: {message, type, param, code}}`; the status decides the type and retryability (shared
 * rule), the upstream message is kept, and a retry-after header is passed on. Inside a stream,
 * `error` events and `response.failed` carry only a code, mapped by `streamErrorType`.
 */
import type { ErrorType } from '../../canonical/types.js';
import { errorTypeForStatus, headerValue, isRetryableStatus } from '../shared/error-status.js';
import type { UpstreamErrorInfo } from '../shared/types.js';
import { isRecord } from './response.js';

export function mapResponsesError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  const info: UpstreamErrorInfo = {
    status,
    type: errorTypeForStatus(status),
    message: errorMessage(status, body),
    retryable: isRetryableStatus(status),
  };
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter !== undefined) info.retryAfter = retryAfter;
  return info;
}

function errorMessage(status: number, body: unknown): string {
  if (
    isRecord(body) &&
    isRecord(body.error) &&
    typeof body.error.message === 'string' &&
    body.error.message.length > 0
  ) {
    const code = typeof body.error.code === 'string' ? ` (${body.error.code})` : '';
    return `${body.error.message}${code}`;
  }
  if (typeof body === 'string' && body.trim().length > 0) return body.trim().slice(0, 500);
  return `upstream answered HTTP ${status}`;
}

/** Error codes of stream `error` events and failed responses -> vendora error types. */
export function streamErrorType(code: string | undefined): ErrorType {
  if (code === undefined) return 'api_error';
  if (code === 'rate_limit_exceeded') return 'rate_limit_error';
  if (code === 'server_error') return 'api_error';
  if (code.startsWith('invalid_') || code === 'context_length_exceeded') return 'invalid_request_error';
  return 'api_error';
}
