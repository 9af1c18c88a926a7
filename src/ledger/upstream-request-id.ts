/**
 * The upstream's own id of a request, read from its answer's headers for the request log: the
 * messages wire sends `request-id`, the chat and responses wires `x-request-id`, the cloudf runtime
 * `x-amzn-requestid` (/work/shared/PROTOCOLS.md). A value that is not short printable ASCII is not
 * kept (the log stores what a person can quote to the provider, never a blob).
 */
const REQUEST_ID_HEADERS = ['request-id', 'x-request-id', 'x-amzn-requestid', 'x-amz-request-id'] as const;
const PRINTABLE = /^[\x21-\x7e]{1,200}$/;

export function upstreamRequestIdOf(headers: Record<string, string | string[] | undefined>): string | null {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && PRINTABLE.test(value)) return value;
  }
  return null;
}
