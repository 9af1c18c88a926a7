/**
 * Chat-completions error response -> vendora error. The body is vendorb's
 * `{"error": {"message", "type", "param", "code"}}`, read leniently (any of it may be missing, and
 * some vendors answer plain text). The status decides the type and retryability
 * (shared/error-status.ts); the upstream's message is kept, its type/code named after it so a
 * reader can tell `insufficient_quota` from a plain rate limit. `retry-after` is kept whenever sent.
 */
import { errorTypeForStatus, headerValue, isRetryableStatus } from '../shared/error-status.js';
import type { UpstreamErrorInfo } from '../shared/types.js';

interface ChatErrorBody {
  error?: { message?: unknown; type?: unknown; code?: unknown } | null;
}

const MAX_TEXT_MESSAGE = 500;

export function mapChatError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  const info: UpstreamErrorInfo = {
    status,
    type: errorTypeForStatus(status),
    message: upstreamMessage(status, body),
    retryable: isRetryableStatus(status),
  };
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter !== undefined) info.retryAfter = retryAfter;
  return info;
}

function upstreamMessage(status: number, body: unknown): string {
  if (typeof body === 'string' && body.trim().length > 0) {
    return `upstream returned HTTP ${status}: ${body.trim().slice(0, MAX_TEXT_MESSAGE)}`;
  }
  const error = typeof body === 'object' && body !== null ? (body as ChatErrorBody).error : undefined;
  const message = typeof error?.message === 'string' && error.message.length > 0 ? error.message : undefined;
  if (message === undefined) return `upstream returned HTTP ${status}`;
  const labels = [error?.type, error?.code].filter(
    (label): label is string => typeof label === 'string' && label.length > 0,
  );
  return labels.length === 0 ? message : `${message} (${[...new Set(labels)].join(', ')})`;
}
