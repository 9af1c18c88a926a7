/**
 * `chat.completion` -> canonical message (pure). Only `choices[0]` is read. Content order is text
 * (the message's `content`, then its `refusal` text) followed by one tool_use block per tool call in
 * the upstream's order. Vendor reasoning fields (`reasoning_content`, ...) are dropped: they carry no
 * signature a canonical thinking block could replay. Legacy `message.function_call` is not read:
 * this primitive never sends `functions`.
 */
import type { MessageResponse, ResponseContentBlock } from '../../canonical/types.js';
import { ZERO_USAGE } from '../../canonical/types.js';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import { stopReasonOf } from './stop-reason.js';
import { fallbackToolUseId, parseToolArguments } from './tool-calls.js';
import { canonicalUsage, isChatUsage } from './usage.js';
import type { ChatCompletion, ChatResponseToolCall } from './wire-types.js';

type ChatChoice = ChatCompletion['choices'][number];

export function parseChatResponse(body: unknown, context: TranslateContext): MessageResponse {
  const choice = firstChoice(body);
  const message = choice.message ?? {};
  const text = textOf(message.content) + textOf(message.refusal);
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const content: ResponseContentBlock[] = [
    ...(text.length > 0 ? [{ type: 'text' as const, text }] : []),
    ...toolCalls.map((call, position) => toolUseBlock(call, position, context)),
  ];
  const usage = (body as ChatCompletion).usage;
  return {
    id: context.messageId,
    type: 'message',
    role: 'assistant',
    content,
    model: context.responseModel,
    stop_reason: stopReasonOf(choice.finish_reason, {
      hasToolCalls: toolCalls.length > 0,
      refused: textOf(message.refusal).length > 0,
    }),
    stop_sequence: null,
    usage: isChatUsage(usage) ? canonicalUsage(usage) : { ...ZERO_USAGE },
  };
}

function firstChoice(body: unknown): ChatChoice {
  if (typeof body !== 'object' || body === null) {
    throw new UpstreamProtocolError('chat completion body is not a JSON object');
  }
  const choices = (body as { choices?: unknown }).choices;
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (typeof choice !== 'object' || choice === null) {
    throw new UpstreamProtocolError('chat completion has no choices[0]');
  }
  return choice as ChatChoice;
}

function toolUseBlock(
  call: ChatResponseToolCall,
  position: number,
  context: TranslateContext,
): ResponseContentBlock {
  const name = call.function?.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new UpstreamProtocolError(`tool call ${position} has no function name`);
  }
  const id =
    typeof call.id === 'string' && call.id.length > 0
      ? call.id
      : fallbackToolUseId(context.messageId, position);
  const argumentsText = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
  return { type: 'tool_use', id, name, input: parseToolArguments(argumentsText, name) };
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
