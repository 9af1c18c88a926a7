/**
 * The client's own chat-completions body for a chat-wire target (POST /v1/chat/completions in
 * pass-through): the model replaced by the upstream's, and two things the ledger needs made
 * explicit: the output bound the reservation was priced at (the alias default, under the profile's
 * token field, when the client gave none) and, on a stream, `stream_options.include_usage` (without
 * the trailing usage chunk the attempt could not settle; the gateway renders the client's own
 * stream, so a client that did not ask for it never sees it). Pure.
 */
import type { WireRequest } from '../shared/types.js';
import type { ChatOptions } from './options.js';
import { CHAT_COMPLETIONS_PATH } from './request.js';

export interface PassthroughBody {
  body: Record<string, unknown>;
  /** The bound the reservation was priced at (the client's, or the alias default). */
  maxTokens: number;
  hasTokenBound: boolean;
}

export function passthroughChatRequest(
  source: PassthroughBody,
  upstreamModel: string,
  options: ChatOptions,
): WireRequest {
  const body: Record<string, unknown> = { ...source.body, model: upstreamModel };
  if (!source.hasTokenBound) body[options.tokenField] = source.maxTokens;
  if (body.stream === true) {
    const streamOptions =
      typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
    body.stream_options = { ...streamOptions, include_usage: true };
  }
  return { path: CHAT_COMPLETIONS_PATH, body };
}
