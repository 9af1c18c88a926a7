/**
 * Chat-completions error response -> vendora error. The body is vendorb's
 * `{"error": {"message", "type", "param", "code"}}`, read leniently (shared/vendorb-error.ts). The
 * status decides the type and retryability (shared/error-status.ts); the upstream's message is
 * kept, its type/code named after it so a reader can tell `insufficient_quota` from a plain rate
 * limit. `retry-after` is kept whenever sent.
 */
import type { UpstreamErrorInfo } from '../shared/types.js';
import { mapVendorbError, type VendorbError } from '../shared/vendorb-error.js';

const MAX_TEXT_MESSAGE = 500;

export function mapChatError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): UpstreamErrorInfo {
  return mapVendorbError(status, body, headers, upstreamMessage);
}

function upstreamMessage(error: VendorbError | undefined, status: number, body: unknown): string {
  if (typeof body === 'string' && body.trim().length > 0) {
    return `upstream returned HTTP ${status}: ${body.trim().slice(0, MAX_TEXT_MESSAGE)}`;
  }
  if (error === undefined) return `upstream returned HTTP ${status}`;
  const labels = [error.type, error.code].filter(
    (label): label is string => typeof label === 'string' && label.length > 0,
  );
  return labels.length === 0 ? error.message : `${error.message} (${[...new Set(labels)].join(', ')})`;
}
