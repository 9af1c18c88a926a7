/**
 * The one rule every primitive uses to classify an upstream HTTP error status: which vendora error
 * type the client sees, and whether fallback may try the next target.
 *
 * Types: 400, 413, 422 and other 4xx -> invalid_request_error; 401 -> authentication_error;
 * 403 -> permission_error; 404 -> not_found_error; 429 -> rate_limit_error; 503 and 529 ->
 * overloaded_error; 500, 502, 504 and other 5xx -> api_error.
 * Retryable (same set the official SDKs retry): 408, 409, 429 and every status >= 500.
 */
import type { ErrorType } from '../../canonical/types.js';
import type { UpstreamErrorInfo } from './types.js';

export function errorTypeForStatus(status: number): ErrorType {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A header value by case-insensitive name; the first value when the header was repeated. */
export function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** The error info the status rule gives, with the upstream's message and retry-after when it sent one. */
export function upstreamErrorInfo(
  status: number,
  message: string,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  const info: UpstreamErrorInfo = {
    status,
    type: errorTypeForStatus(status),
    message,
    retryable: isRetryableStatus(status),
  };
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter !== undefined) info.retryAfter = retryAfter;
  return info;
}
