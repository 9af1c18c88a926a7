/**
 * The generate-content text primitive (developer API, `v1beta`): text and inline images in, one
 * text block out; no tools, no thinking blocks. Routing calls `generateContentCannotCarry` before
 * any I/O; the translators assume it passed. The connection base URL is the host root.
 */
import { modelNamed, type Primitive } from '../shared/types.js';
import { mapGenerateContentError } from './error.js';
import type { GenerateContentOptions } from './options.js';
import { buildGenerateContentRequest } from './request.js';
import { parseGenerateContentResponse } from './response.js';
import { createGenerateContentStreamTranslator } from './stream.js';

export { generateContentCannotCarry } from './cannot-carry.js';
export {
  DEFAULT_GENERATE_CONTENT_OPTIONS,
  type GenerateContentOptions,
  generateContentOptionsProblem,
} from './options.js';

export const generateContentPrimitive: Primitive<GenerateContentOptions> = {
  name: 'generate-content',
  buildRequest: buildGenerateContentRequest,
  parseResponse: (body, context) => parseGenerateContentResponse(body, context),
  answeredModel: (body) => modelNamed(body, 'modelVersion'),
  createStreamTranslator: (context) => createGenerateContentStreamTranslator(context),
  mapError: mapGenerateContentError,
};
