/**
 * The `Svc-Tags` header of a model call (governance/attributes.ts holds its limits): parsed once,
 * after authentication and before anything is reserved, onto the request's record, from which each
 * attempt's reservation takes it (ledger/ledger.ts attributionOf). A bad header is a 400
 * invalid_request naming `svc-tags`, rendered in the endpoint's own dialect.
 */
import type { FastifyRequest } from 'fastify';
import { parseTags, TAGS_HEADER } from '../governance/attributes.js';
import { requestRecordOf } from '../observability/http-hooks.js';

export function readCallTags(request: FastifyRequest): void {
  const tags = parseTags(request.headers[TAGS_HEADER]);
  const record = requestRecordOf(request);
  if (record) record.tags = tags;
}
