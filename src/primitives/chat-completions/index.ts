/** The chat-completions wire primitive (`POST {base}/chat/completions`). */
import { modelNamed, type Primitive } from '../shared/types.js';
import { mapChatError } from './error.js';
import type { ChatOptions } from './options.js';
import { buildChatRequest } from './request.js';
import { parseChatResponse } from './response.js';
import { createChatStreamTranslator } from './stream.js';

export { CannotCarryError, chatCannotCarry, findChatUncarriable } from './cannot-carry.js';
export type { ChatOptions } from './options.js';

export const chatCompletions: Primitive<ChatOptions> = {
  name: 'chat-completions',
  buildRequest: buildChatRequest,
  parseResponse: (body, context) => parseChatResponse(body, context),
  answeredModel: (body) => modelNamed(body),
  createStreamTranslator: createChatStreamTranslator,
  mapError: mapChatError,
};
