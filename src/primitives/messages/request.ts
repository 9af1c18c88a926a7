/**
 * Canonical request -> messages wire. The canonical model is this wire, so the body is the request
 * with only `model` replaced by the upstream's model id. Native mode forwards the client's own body
 * object through `replaceModel` for the same reason: nothing but the model changes.
 * `vendora-beta` is not set here: which beta tokens reach the upstream is the gateway core's
 * decision (native mode only, only tokens the connection accepts); it adds the header itself.
 */
import type { CountTokensRequest, MessagesRequest } from '../../canonical/types.js';
import type { TranslateContext, WireRequest } from '../shared/types.js';
import { type MessagesOptions, VENDORA_VERSION } from './options.js';

export const MESSAGES_PATH = '/v1/messages';
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

/** A copy of `body` with `model` replaced (kept in its original key position); the input is untouched. */
export function replaceModel<Body extends object>(body: Body, model: string): Body & { model: string } {
  return { ...body, model };
}

export function buildMessagesRequest(
  request: MessagesRequest,
  context: TranslateContext,
  options: MessagesOptions,
): WireRequest {
  return {
    path: MESSAGES_PATH,
    body: replaceModel(request, context.upstreamModel),
    headers: wireHeaders(options),
  };
}

/** count_tokens is served natively: the (validated) body goes upstream with only the model replaced. */
export function buildCountTokensRequest(
  body: CountTokensRequest | Record<string, unknown>,
  context: TranslateContext,
  options: MessagesOptions,
): WireRequest {
  return {
    path: COUNT_TOKENS_PATH,
    body: replaceModel(body, context.upstreamModel),
    headers: wireHeaders(options),
  };
}

function wireHeaders(options: MessagesOptions): Record<string, string> {
  return { 'vendora-version': options.version };
}

/** Native mode: the client's own body with only the model replaced, the beta tokens it may pass. */
export function buildNativeRequest(
  body: Record<string, unknown>,
  upstreamModel: string,
  betaTokens: readonly string[],
): WireRequest {
  return withBetaTokens(
    {
      path: MESSAGES_PATH,
      body: replaceModel(body, upstreamModel),
      headers: { 'vendora-version': VENDORA_VERSION },
    },
    betaTokens,
  );
}

/** `wire` with the `vendora-beta` header carrying `betaTokens` (unchanged when there are none). */
export function withBetaTokens(wire: WireRequest, betaTokens: readonly string[]): WireRequest {
  if (betaTokens.length === 0) return wire;
  return { ...wire, headers: { ...wire.headers, 'vendora-beta': betaTokens.join(',') } };
}
