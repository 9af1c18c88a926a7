/**
 * The stateless responses primitive: canonical requests carried over `POST /responses` (the
 * connection base URL ends in /v1) with the whole history as input items and `store: false`.
 * Routing calls `responsesCannotCarry` before any I/O; the translators assume it passed.
 */
import { modelNamed, type Primitive } from '../shared/types.js';
import { mapResponsesError } from './error.js';
import type { ResponsesOptions } from './options.js';
import { buildResponsesRequest } from './request.js';
import { parseResponsesResponse } from './response.js';
import { createResponsesStreamTranslator } from './stream.js';

export { responsesCannotCarry } from './cannot-carry.js';
export { DEFAULT_RESPONSES_OPTIONS, type ResponsesOptions } from './options.js';

export const responsesPrimitive: Primitive<ResponsesOptions> = {
  name: 'responses',
  buildRequest: buildResponsesRequest,
  parseResponse: (body, context) => parseResponsesResponse(body, context),
  answeredModel: (body) => modelNamed(body),
  createStreamTranslator: (context) => createResponsesStreamTranslator(context),
  mapError: mapResponsesError,
};
