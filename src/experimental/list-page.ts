/**
 * The vendorb list shape of GET /v1/files and GET /v1/batches: `{object: "list", data, first_id,
 * last_id, has_more}`, paged by `limit` and `after` (the id of the last object of the previous
 * page, as the SDKs' auto-pagination sends it). The store reads limit + 1 rows; the extra one only
 * says whether more follow.
 */
import { GatewayError } from '../errors/gateway-error.js';

export interface ListQuery {
  limit?: unknown;
  after?: unknown;
}

export interface PageRequest {
  limit: number;
  after: string | undefined;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${message}`, { param });
}

/** A query string value: absent, or one string (a repeated parameter is refused). */
export function queryText(query: Record<string, unknown>, param: string): string | undefined {
  const value = query[param];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(param, 'send it once');
  return value;
}

export function pageRequest(
  query: Record<string, unknown>,
  limits: { defaultLimit: number; maxLimit: number },
): PageRequest {
  const text = queryText(query, 'limit');
  const limit = text === undefined ? limits.defaultLimit : Number(text);
  if (text !== undefined && (!/^\d+$/.test(text) || limit < 1 || limit > limits.maxLimit))
    throw invalid('limit', `must be an integer from 1 to ${limits.maxLimit}`);
  const after = queryText(query, 'after');
  if (after === '') throw invalid('after', 'must be the id of an object of an earlier page');
  return { limit, after };
}

/** An `after` id that names no object of the caller's Project. */
export function unknownCursor(after: string): GatewayError {
  return invalid('after', `no object with id ${after} to page after (it may have been deleted)`);
}

export function listPage<Row>(
  rows: readonly Row[],
  limit: number,
  view: (row: Row) => { id: string } & Record<string, unknown>,
) {
  const data = rows.slice(0, limit).map(view);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: rows.length > limit,
  };
}
