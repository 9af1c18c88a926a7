/**
 * What the stateless responses primitive cannot carry. Routing calls `responsesCannotCarry` before
 * any I/O and routes the target away with the reason; `buildResponsesRequest` may then assume every
 * remaining field and block has a faithful mapping (nothing is dropped silently).
 */
import type { ContentBlockParam, MessagesRequest, ToolResultContentBlock } from '../../canonical/types.js';

/** The reason the request cannot be carried, or undefined when it can. Pure. */
export function responsesCannotCarry(request: MessagesRequest): string | undefined {
  return fieldReason(request) ?? toolReason(request) ?? messagesReason(request);
}

function fieldReason(request: MessagesRequest): string | undefined {
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) {
    return 'stop_sequences: the responses wire has no stop parameter';
  }
  if (request.top_k !== undefined) return 'top_k: the responses wire has no top_k parameter';
  if (request.thinking !== undefined && request.thinking.type !== 'disabled') {
    return `thinking.type ${request.thinking.type}: the stateless responses primitive does not carry reasoning`;
  }
  if (request.output_config?.effort != null) {
    return 'output_config.effort: the stateless responses primitive does not carry reasoning effort';
  }
  if (request.metadata?.user_id != null) return 'metadata.user_id: not carried by the responses primitive';
  if (request.service_tier !== undefined) return 'service_tier: not carried by the responses primitive';
  return undefined;
}

function toolReason(request: MessagesRequest): string | undefined {
  for (const [index, tool] of (request.tools ?? []).entries()) {
    if (tool.type !== undefined && tool.type !== 'custom') {
      return `tools[${index}]: vendora-defined tool type ${tool.type} has no responses function equivalent`;
    }
  }
  return undefined;
}

function messagesReason(request: MessagesRequest): string | undefined {
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
    case 'tool_use':
      return undefined;
    case 'image':
      return block.source.type === 'file' ? 'image with a file source cannot be carried' : undefined;
    case 'tool_result':
      return toolResultReason(block.content);
    case 'document':
    case 'search_result':
    case 'thinking':
    case 'redacted_thinking':
      return `${block.type} blocks cannot be carried by the responses primitive`;
    default:
      return unreachable(block);
  }
}

function toolResultReason(content: string | ToolResultContentBlock[] | undefined): string | undefined {
  if (content === undefined || typeof content === 'string') return undefined;
  for (const part of content) {
    if (part.type === 'document' || part.type === 'search_result') {
      return `tool_result with ${part.type} content cannot be carried`;
    }
    if (part.type === 'image' && part.source.type === 'file') {
      return 'tool_result image with a file source cannot be carried';
    }
  }
  return undefined;
}

function unreachable(value: never): never {
  throw new Error(`unhandled content block ${JSON.stringify(value)}`);
}
