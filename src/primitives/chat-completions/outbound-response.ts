/**
 * Canonical answer -> `chat.completion` (the outbound direction, POST /v1/chat/completions). Pure.
 * Text blocks join into `content` (null when there is none), tool_use blocks become `tool_calls`
 * (ids kept, input as a JSON text), thinking blocks are dropped (the chat wire has no place for
 * them), the stop reason becomes `finish_reason` and the usage the chat usage.
 */
import type { MessageResponse } from '../../canonical/types.js';
import { finishReasonOf } from './stop-reason.js';
import { type ChatUsageOut, chatUsageOf } from './usage.js';
import type { ChatFinishReason, ChatToolCall } from './wire-types.js';

/** What the gateway says about the answer: its id, creation time (Unix seconds) and the alias. */
export interface ChatOutboundContext {
  id: string;
  created: number;
  model: string;
}

export interface ChatCompletionOut {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: ChatToolCall[] };
    logprobs: null;
    finish_reason: ChatFinishReason;
  }>;
  usage: ChatUsageOut;
}

export function canonicalToChatCompletion(
  message: MessageResponse,
  context: ChatOutboundContext,
): ChatCompletionOut {
  let text: string | null = null;
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text = (text ?? '') + block.text;
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    }
  }
  return {
    id: context.id,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(message.stop_reason),
      },
    ],
    usage: chatUsageOf(message.usage),
  };
}
