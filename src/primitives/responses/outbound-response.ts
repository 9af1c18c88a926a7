/**
 * Canonical message -> responses-wire Response object (protocols 5.4), for /v1/responses served by
 * a target of another wire. Blocks map in order: consecutive text blocks -> one `message` item of
 * output_text parts; thinking -> a `reasoning` item with one summary part; tool_use -> a
 * `function_call` item (call_id = the tool_use id); redacted thinking has no readable form and is
 * dropped. stop_reason max_tokens / refusal -> status incomplete with its reason. Pure.
 */
import type { MessageResponse, ResponseContentBlock } from '../../canonical/types.js';
import {
  itemId,
  type OutboundContext,
  type OutputItem,
  type ResponseObject,
  responseObject,
  terminalOf,
} from './outbound-object.js';

export function canonicalToResponsesResponse(
  message: MessageResponse,
  context: OutboundContext,
): ResponseObject {
  const terminal = terminalOf(message.stop_reason);
  const output: OutputItem[] = [];
  for (const block of message.content) {
    const last = output.at(-1);
    const item = blockItem(block, context, output.length);
    if (item === undefined) continue;
    if (item.type === 'message' && last?.type === 'message') last.content.push(...item.content);
    else output.push(item);
  }
  // Only the message the answer was cut off in is incomplete; what came before it is whole.
  const last = output.at(-1);
  if (terminal.status === 'incomplete' && last?.type === 'message') last.status = 'incomplete';
  return responseObject(context, { ...terminal, output, usage: message.usage });
}

function blockItem(
  block: ResponseContentBlock,
  context: OutboundContext,
  outputIndex: number,
): OutputItem | undefined {
  switch (block.type) {
    case 'text':
      return {
        type: 'message',
        id: itemId(context, 'msg', outputIndex),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: block.text, annotations: [] }],
      };
    case 'thinking':
      return {
        type: 'reasoning',
        id: itemId(context, 'rs', outputIndex),
        summary: [{ type: 'summary_text', text: block.thinking }],
      };
    case 'tool_use':
      return {
        type: 'function_call',
        id: itemId(context, 'fc', outputIndex),
        call_id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input),
        status: 'completed',
      };
    case 'redacted_thinking':
      return undefined;
    default: {
      const never: never = block;
      throw new Error(`unknown content block ${JSON.stringify(never)}`);
    }
  }
}
