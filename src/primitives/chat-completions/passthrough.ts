/**
 * The client's own chat-completions body for a chat-wire target (POST /v1/chat/completions in
 * pass-through): the model replaced by the upstream's, and two things the ledger needs made
 * explicit: the output bound the reservation was priced at (the alias default, under the profile's
 * token field, when the client gave none) and, on a stream, `stream_options.include_usage` (without
 * the trailing usage chunk the attempt could not settle; the gateway renders the client's own
 * stream, so a client that did not ask for it never sees it). A bound given under only the other
 * token field moves to the profile's (reasoning models refuse `max_tokens`; some compatible vendors
 * know only `max_tokens`). Pure.
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
  const other = options.tokenField === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
  const given = (field: string) => body[field] !== undefined && body[field] !== null;
  if (!source.hasTokenBound) body[options.tokenField] = source.maxTokens;
  else if (!given(options.tokenField) && given(other)) {
    body[options.tokenField] = body[other];
    delete body[other];
  }
  if (body.stream === true) {
    const streamOptions =
      typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
    body.stream_options = { ...streamOptions, include_usage: true };
  }
  return { path: CHAT_COMPLETIONS_PATH, body };
}
