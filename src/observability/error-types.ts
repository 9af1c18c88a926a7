/**
 * The closed list of `error_type` label values (metrics) and `error.type` attribute values
 * (spans), and the mapping from the attempt runner's failure details to them. The ledger and the
 * audit trail keep the detail; docs/observability.md lists these classes from here.
 */

/** Each class and what it means (the page's list). */
export const ERROR_TYPES = {
  timeout: 'the upstream did not answer (or went silent) within the connection timeout',
  connect: 'the connection could not be opened (nothing was sent)',
  dropped: 'the connection or stream ended before the answer was complete',
  client_gone: 'the client went away, so the call was aborted',
  protocol: 'an answer the wire does not allow (unreadable, untranslatable, no usage, a 1xx/3xx status)',
  http_429: 'the upstream answered 429',
  http_4xx: 'the upstream answered another 4xx status',
  http_5xx: 'the upstream answered a 5xx status',
  local: 'failed in this process before anything was sent (serialisation, signing, a bad URL)',
  cancelled: 'a background attempt (batch, deferred response) cancelled by its client',
  expired: 'committed when its lease or its background record expired',
  other: 'any other background ending (record not stored, idempotent replay, connection gone)',
} as const;

export type ErrorClass = keyof typeof ERROR_TYPES;

/** The class of a runner's error detail (see ERROR_TYPES). */
export function errorClass(detail: string): ErrorClass {
  switch (detail) {
    case 'timeout':
    case 'connect':
    case 'dropped':
    case 'client_gone':
    case 'protocol':
    case 'http_429':
    case 'http_4xx':
    case 'http_5xx':
      return detail;
    case 'stream_incomplete':
      return 'dropped';
    case 'aborted':
      return 'client_gone';
    case 'no_cost':
      return 'protocol';
    case 'lease_expired':
    case 'expired':
    case 'batch_record_expired':
      return 'expired';
  }
  const status = /^http_(\d)\d\d$/.exec(detail);
  if (status) return status[1] === '4' ? 'http_4xx' : status[1] === '5' ? 'http_5xx' : 'protocol';
  if (detail.startsWith('local_')) return 'local';
  if (detail.startsWith('cancelled')) return 'cancelled';
  return 'other';
}
