/**
 * Responses wire errors -> the vendora dialect. HTTP errors carry the vendorb body
 * `{error: {message, type, param, code}}` (read by shared/vendorb-error.ts); the status decides the
 * type and retryability (shared rule), the upstream message is kept with its code, and a
 * retry-after header is passed on. Inside a stream, `error` events and `response.failed` carry
 * only a code, mapped by `streamErrorType`.
 */
import type { ErrorType } from '../../canonical/types.js';
import type { UpstreamErrorInfo } from '../shared/types.js';
import { mapVendorbError, type VendorbError } from '../shared/vendorb-error.js';

export function mapResponsesError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  return mapVendorbError(status, body, headers, errorMessage);
}

function errorMessage(error: VendorbError | undefined, status: number, body: unknown): string {
  if (error !== undefined) {
    const code = typeof error.code === 'string' ? ` (${error.code})` : '';
    return `${error.message}${code}`;
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
