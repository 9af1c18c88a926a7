/**
 * POST /v1/chat/completions (vendorb chat-completions wire, vendorb error dialect). Thin: the
 * model endpoint handler shared with /v1/messages (authentication, the key's model allow-list,
 * JSON or the chunk stream with backpressure and client-gone handling) over the chat use case.
 */
import type { FastifyInstance } from 'fastify';
import type { ChatCompletionsService } from '../gateway/chat-completions/chat-service.js';
import type { Authenticator } from './auth.js';
import { modelCallHandler } from './messages-routes.js';

export interface ChatRouteDeps {
  authenticator: Authenticator;
  chat: ChatCompletionsService;
}

export function registerChatRoutes(app: FastifyInstance, deps: ChatRouteDeps): void {
  app.post(
    '/v1/chat/completions',
    modelCallHandler(deps.authenticator, (call) => deps.chat.create(call)),
  );
}
