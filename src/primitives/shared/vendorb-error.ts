/**
 * vendorb's HTTP error body, `{"error": {"message", "type", "param", "code"}}`, spoken by both the
 * chat-completions and the responses wire. It is read leniently: any of it may be missing, and
 * some upstreams answer plain text. The status decides the type and retryability
 * (error-status.ts); each wire words the client-facing message itself.
 */
import { upstreamErrorInfo } from './error-status.js';
import type { UpstreamErrorInfo } from './types.js';

/** The error object of a vendorb body that carries a non-empty message; the rest as sent. */
export interface VendorbError {
  message: string;
  type: unknown;
  code: unknown;
}

/** How a wire words the message: from the body's error when it had one, else from the raw body. */
export type DescribeVendorbError = (error: VendorbError | undefined, status: number, body: unknown) => string;

export function mapVendorbError(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
  describe: DescribeVendorbError,
): UpstreamErrorInfo {
  return upstreamErrorInfo(status, describe(readVendorbError(body), status, body), headers);
}

export function readVendorbError(body: unknown): VendorbError | undefined {
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const { message, type, code } = body.error;
  return typeof message === 'string' && message.length > 0 ? { message, type, code } : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
