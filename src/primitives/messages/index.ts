/**
 * The messages primitive: the vendora Messages wire, which is the canonical model itself. Requests
 * go out with only the model replaced, responses come back with the gateway's id and alias, and
 * streams pass through event by event (see stream.ts). Native mode uses `replaceModel` and
 * `passthroughResponse` to forward bodies verbatim.
 */
import { modelNamed, type Primitive } from '../shared/types.js';
import { mapMessagesError } from './error.js';
import type { MessagesOptions } from './options.js';
import { buildMessagesRequest } from './request.js';
import { parseMessagesResponse } from './response.js';
import { createMessagesStreamTranslator } from './stream.js';

export { mapMessagesError } from './error.js';
export { DEFAULT_MESSAGES_OPTIONS, type MessagesOptions, VENDORA_VERSION } from './options.js';
export {
  buildCountTokensRequest,
  buildMessagesRequest,
  buildNativeRequest,
  COUNT_TOKENS_PATH,
  MESSAGES_PATH,
  replaceModel,
  withBetaTokens,
} from './request.js';
export { parseCountTokensResponse, parseMessagesResponse, passthroughResponse } from './response.js';
export { createMessagesStreamTranslator } from './stream.js';
export { mergeCumulativeUsage, normaliseUsage } from './usage.js';

export const messagesPrimitive: Primitive<MessagesOptions> = {
  name: 'messages',
  buildRequest: buildMessagesRequest,
  parseResponse: (body, context) => parseMessagesResponse(body, context),
  answeredModel: (body) => modelNamed(body),
  createStreamTranslator: (context) => createMessagesStreamTranslator(context),
  mapError: mapMessagesError,
};
