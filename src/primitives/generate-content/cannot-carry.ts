/**
 * What the generate-content text primitive cannot carry. Routing calls
 * `generateContentCannotCarry` before any I/O and routes the target away with the reason;
 * `buildGenerateContentRequest` may then assume every remaining field and block has a faithful
 * mapping. Tools are not carried at all: tool calls would need thought-signature bookkeeping across
 * turns (see the wire notes) that a stateless portable gateway cannot keep.
 */
import type { ContentBlockParam, MessagesRequest } from '../../canonical/types.js';
import { buildContents } from './request.js';

/** The reason the request cannot be carried, or undefined when it can. Pure. */
export function generateContentCannotCarry(request: MessagesRequest): string | undefined {
  return fieldReason(request) ?? blocksReason(request) ?? emptyTurnReason(request);
}

function fieldReason(request: MessagesRequest): string | undefined {
  if (request.tools !== undefined && request.tools.length > 0)
    return 'tools: the generate-content text primitive carries no tools';
  if (request.tool_choice !== undefined)
    return 'tool_choice: the generate-content text primitive carries no tools';
  if (request.thinking !== undefined && request.thinking.type !== 'disabled') {
    return `thinking.type ${request.thinking.type}: not carried (the thinking budget is fixed per target)`;
  }
  if (request.output_config?.effort != null)
    return 'output_config.effort: not carried by the generate-content primitive';
  if (request.output_config?.format != null)
    return 'output_config.format: not carried by the generate-content primitive';
  if (request.metadata?.user_id != null)
    return 'metadata.user_id: not carried by the generate-content primitive';
  if (request.service_tier !== undefined)
    return 'service_tier: not carried by the generate-content primitive';
  return undefined;
}

function blocksReason(request: MessagesRequest): string | undefined {
  for (const [messageIndex, message] of request.messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [blockIndex, block] of message.content.entries()) {
      const reason = blockReason(block);
      if (reason !== undefined) return `messages[${messageIndex}].content[${blockIndex}]: ${reason}`;
    }
  }
  return undefined;
}

function blockReason(block: ContentBlockParam): string | undefined {
  switch (block.type) {
    case 'text':
      return undefined;
    case 'image':
      return block.source.type === 'base64'
        ? undefined
        : `image with a ${block.source.type} source cannot be carried (only base64)`;
    case 'tool_use':
    case 'tool_result':
    case 'document':
    case 'search_result':
    case 'thinking':
    case 'redacted_thinking':
      return `${block.type} blocks cannot be carried by the generate-content text primitive`;
    default:
      return unreachable(block);
  }
}

function emptyTurnReason(request: MessagesRequest): string | undefined {
  const empty = buildContents(request.messages).findIndex((content) => content.parts.length === 0);
  if (empty === -1) return undefined;
  return `contents[${empty}]: a turn with only empty text cannot be sent (the wire rejects empty parts)`;
}

function unreachable(value: never): never {
  throw new Error(`unhandled content block ${JSON.stringify(value)}`);
}
