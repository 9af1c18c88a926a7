/**
 * The request id: the client's `x-request-id` when it is well formed, else a fresh `req_...` id.
 * Well formed: one header value of 1 to 128 characters, each a letter, digit or one of `. _ - : ~`
 * (enough for UUIDs, ULIDs and the ids of common proxies; nothing that could break a log line, a
 * header or a shell).
 */
import type { IncomingMessage } from 'node:http';
import { randomBase32 } from '../lib/ids.js';

export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:~-]{1,128}$/;

export function requestIdFor(request: IncomingMessage): string {
  const inbound = request.headers['x-request-id'];
  if (typeof inbound === 'string' && WELL_FORMED_REQUEST_ID.test(inbound)) return inbound;
  return `req_${randomBase32(24)}`;
}
