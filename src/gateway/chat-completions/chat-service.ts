/**
 * POST /v1/chat/completions: the vendorb chat-completions face of the /v1/messages machine
 * (DESIGN.md 5, "The vendorb front door"), on every messages alias.
 *
 * parse the chat body -> canonical request (primitives/chat-completions/inbound-request.ts; n other
 * than 1, unknown or refused fields: 400 naming the field; no token bound: the alias's
 * default_max_tokens) -> a field only the chat wire carries with no chat-wire target on the alias:
 * 400 naming it -> MessagesService.serve: the same route plan (other targets routed away naming
 * such fields in svc-route-skipped), fallback, and one attempt runner call per try (Run, budgets,
 * caps, rate limits, reports, metrics, audit); a chat-wire target gets the client's body with only
 * the model replaced (pass-through), every other target the primitive's translation -> the
 * canonical answer rendered as a chat.completion, or the canonical stream's events rendered as
 * chat.completion.chunk events as they are translated (usage chunk with include_usage, then [DONE]).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { MessageResponse, MessagesRequest } from '../../canonical/types.js';
import { validateMessagesRequest } from '../../canonical/validate-messages.js';
import { ERROR_CATALOGUE, type ErrorCode } from '../../errors/catalogue.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Caller } from '../../governance/service.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { type Clock, unixSeconds } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import {
  ChatInputError,
  type ChatOnlyField,
  chatRequestToCanonical,
  type InboundChat,
} from '../../primitives/chat-completions/inbound-request.js';
import type { ChatOptions } from '../../primitives/chat-completions/options.js';
import {
  type ChatOutboundContext,
  canonicalToChatCompletion,
} from '../../primitives/chat-completions/outbound-response.js';
import { ChatChunkWriter, type ChatStreamError } from '../../primitives/chat-completions/outbound-stream.js';
import { passthroughChatRequest } from '../../primitives/chat-completions/passthrough.js';
import { attachedRun, routeMode } from '../messages/call-headers.js';
import type { MessagesOutcome, MessagesService } from '../messages/messages-service.js';
import type { FaceSkips } from '../messages/route-plan.js';

export const CHAT_COMPLETIONS_ENDPOINT = '/v1/chat/completions';

export interface ChatCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
  bodyBytes: number;
  clientSignal: CancelSignal;
}

export interface ChatServiceDeps {
  messages: MessagesService;
  clock: Clock;
}

/** The client's chat body as a validated canonical request, refusals naming the field. */
function inbound(body: unknown, defaultMaxTokens: number): InboundChat {
  let parsed: InboundChat;
  try {
    parsed = chatRequestToCanonical(body, { defaultMaxTokens });
  } catch (error) {
    if (error instanceof ChatInputError) {
      throw new GatewayError('invalid_request', error.message, { param: error.param });
    }
    throw error;
  }
  // The translation builds plain data (no undefined members, nothing but JSON values), which the
  // validator checks as it does a client's body; no JSON round trip (a third of what this face
  // added to a call, bench/instructions.ts).
  const request = validateMessagesRequest(parsed.request, 'portable');
  return { ...parsed, request: request as MessagesRequest };
}

/** Targets of another wire are routed away naming the fields only the chat wire carries. */
function chatOnlySkips(fields: ChatOnlyField[]): FaceSkips | undefined {
  if (fields.length === 0) return undefined;
  return (row) =>
    row.primitive === 'chat-completions'
      ? []
      : fields.map((field) => ({ code: 'unsupported_field' as const, detail: field.detail }));
}

/** A mid-stream canonical error as the chat wire's error object (the SDK raises it as APIError). */
const chatStreamError: ChatStreamError = (error) => {
  const code =
    error.code !== undefined && Object.hasOwn(ERROR_CATALOGUE, error.code) ? error.code : undefined;
  return {
    message: error.message,
    type: code === undefined ? error.type : ERROR_CATALOGUE[code as ErrorCode].vendorb,
    param: null,
    code: error.code ?? null,
  };
};

export class ChatCompletionsService {
  constructor(private readonly deps: ChatServiceDeps) {}

  async create(call: ChatCall): Promise<MessagesOutcome> {
    const runId = attachedRun(call.caller, call.headers);
    if ((routeMode(call.headers) ?? 'portable') !== 'portable') {
      throw new GatewayError(
        'unsupported_field',
        'Svc-Route-Mode: /v1/chat/completions routes portably only.',
        {
          param: 'svc-route-mode',
        },
      );
    }
    const model = (call.body as { model?: unknown } | null)?.model;
    if (typeof model !== 'string' || model.length === 0) {
      throw new GatewayError('invalid_request', 'model: a model alias is required', { param: 'model' });
    }
    const { messages } = this.deps;
    const alias = messages.alias(model);
    const chat = inbound(call.body, alias.defaultMaxTokens);
    const [first] = chat.chatOnly;
    if (first && !alias.targets.some((target) => target.connection.row.primitive === 'chat-completions')) {
      throw new GatewayError(
        'unsupported_field',
        `${first.param}: no target of model ${alias.alias} can carry it (${first.detail})`,
        { param: first.param },
      );
    }
    const context: ChatOutboundContext = {
      id: `chatcmpl-${newId('msg').slice(4)}`,
      created: unixSeconds(this.deps.clock.now()),
      model: alias.alias,
    };
    const passthrough = {
      body: call.body as Record<string, unknown>,
      maxTokens: chat.request.max_tokens,
      hasTokenBound: chat.hasTokenBound,
    };
    const outcome = await messages.serve({
      caller: call.caller,
      runId,
      mode: 'portable',
      request: chat.request,
      rawBody: passthrough.body,
      bodyBytes: call.bodyBytes,
      betaHeader: undefined,
      endpoint: CHAT_COMPLETIONS_ENDPOINT,
      clientSignal: call.clientSignal,
      sameWire: {
        primitive: 'chat-completions',
        build: (upstreamModel, options) =>
          passthroughChatRequest(passthrough, upstreamModel, options as ChatOptions),
      },
      faceSkips: chatOnlySkips(chat.chatOnly),
      renderEvents: () => new ChatChunkWriter(context, chat.includeUsage, chatStreamError),
    });
    if (outcome.kind === 'json') {
      return {
        kind: 'json',
        headers: outcome.headers,
        body: canonicalToChatCompletion(outcome.body as MessageResponse, context),
      };
    }
    // A stream's text is already chat chunks (renderEvents).
    return outcome;
  }
}
