/**
 * One renderer per error dialect, chosen by the route: /svc/v1 speaks svc, the Messages endpoints
 * speak vendora (so the vendora SDK raises proper errors), every other /v1 endpoint speaks vendorb.
 */
import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';
import type { GatewayError } from './gateway-error.js';

export type Dialect = 'svc' | 'vendora' | 'vendorb';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export function dialectOf(path: string): Dialect {
  if (path.startsWith('/svc/')) return 'svc';
  if (path.includes('/messages')) return 'vendora';
  if (path.startsWith('/v1/')) return 'vendorb';
  return 'svc';
}

/** The vendora error object, also used as the data of a mid-stream SSE `error` event. */
export function vendoraError(error: GatewayError) {
  return {
    type: 'error' as const,
    error: {
      type: error.options.type ?? ERROR_CATALOGUE[error.code].vendora,
      message: error.message,
      code: error.code,
    },
  };
}

export function renderError(dialect: Dialect, error: GatewayError, requestId: string): RenderedError {
  const headers: Record<string, string> = {};
  if (error.options.retryAfter !== undefined) headers['retry-after'] = error.options.retryAfter;
  switch (dialect) {
    case 'svc':
      return {
        status: error.status,
        headers,
        body: { error: { code: error.code, message: error.message, request_id: requestId } },
      };
    case 'vendora':
      return { status: error.status, headers, body: { ...vendoraError(error), request_id: requestId } };
    case 'vendorb':
      return {
        status: error.status,
        headers,
        body: {
          error: {
            message: error.message,
            type: error.options.type ?? vendorbType(error.code),
            param: error.options.param ?? null,
            code: error.code,
          },
        },
      };
    default: {
      const never: never = dialect;
      throw new Error(`unknown dialect ${String(never)}`);
    }
  }
}

function vendorbType(code: ErrorCode): string {
  return ERROR_CATALOGUE[code].vendorb;
}
