/**
 * What the chat-completions wire cannot carry, decided before any I/O so routing can route a
 * request away with a reason instead of catching. `buildChatRequest` runs the same check first and
 * throws `CannotCarryError`, so the two can never disagree.
 *
 * Field-level gaps listed in the profile table (thinking, top_k, service_tier, metadata) are the
 * catalogue's business and are not repeated here; this module covers content and tool shapes.
 */
import type {
  ContentBlockParam,
  MessageParam,
  MessagesRequest,
  Tool,
  ToolResultContentBlock,
} from '../../canonical/types.js';
import { assertNever } from './assert-never.js';

/** Thrown by `buildChatRequest` when the request holds something this wire cannot express. */
export class CannotCarryError extends Error {
  override readonly name = 'CannotCarryError';
  /** Path of the offending field, e.g. `messages[2].content[0].source`. */
  readonly field: string;

  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.field = field;
  }
}

export interface UncarriableField {
  field: string;
  reason: string;
}

/** Tool names the chat wire accepts: letters, digits, `_` and `-`, 1 to 64 characters. */
const CHAT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The reason this request cannot be carried by chat-completions, or undefined when it can. */
export function chatCannotCarry(request: MessagesRequest): string | undefined {
  const found = findChatUncarriable(request);
  return found === undefined ? undefined : `${found.field}: ${found.reason}`;
}

/** The first field chat-completions cannot carry, with its path, or undefined. */
export function findChatUncarriable(request: MessagesRequest): UncarriableField | undefined {
  return findToolProblem(request) ?? findMessagesProblem(request.messages);
}

function findToolProblem(request: MessagesRequest): UncarriableField | undefined {
  const tools = request.tools ?? [];
  for (const [position, tool] of tools.entries()) {
    const problem = toolProblem(tool);
    if (problem !== undefined) return { field: `tools[${position}]`, reason: problem };
  }
  const choice = request.tool_choice;
  if (choice !== undefined && (choice.type === 'any' || choice.type === 'tool') && tools.length === 0) {
    return { field: 'tool_choice', reason: `tool_choice "${choice.type}" needs at least one tool` };
  }
  return undefined;
}

function toolProblem(tool: Tool): string | undefined {
  if (tool.type !== undefined && tool.type !== 'custom') {
    return `vendora-defined tool type "${tool.type}" has no chat-completions equivalent`;
  }
  if (!CHAT_TOOL_NAME.test(tool.name)) {
    return `tool name "${tool.name}" is not 1-64 characters of letters, digits, "_" or "-"`;
  }
  if (tool.strict === true) return 'strict tools are not carried by chat-completions';
  return undefined;
}

function findMessagesProblem(messages: MessageParam[]): UncarriableField | undefined {
  const last = messages.at(-1);
  if (last !== undefined && last.role === 'assistant') {
    return {
      field: `messages[${messages.length - 1}]`,
      reason: 'a final assistant message (prefill) has no chat-completions equivalent',
    };
  }
  for (const [messageIndex, message] of messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [blockIndex, block] of message.content.entries()) {
      const field = `messages[${messageIndex}].content[${blockIndex}]`;
      const reason = blockProblem(block, message.role);
      if (reason !== undefined) return { field, reason };
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        const nested = findToolResultProblem(block.content, field);
        if (nested !== undefined) return nested;
      }
    }
  }
  return undefined;
}

function blockProblem(block: ContentBlockParam, role: MessageParam['role']): string | undefined {
  const onlyIn = (allowed: MessageParam['role']): string | undefined =>
    role === allowed ? undefined : `a ${block.type} block in a ${role} message cannot be carried`;
  switch (block.type) {
    case 'text':
      return undefined;
    case 'tool_use':
      return onlyIn('assistant');
    case 'tool_result':
      return onlyIn('user');
    case 'image':
      return onlyIn('user') ?? imageProblem(block.source.type);
    case 'document':
      return onlyIn('user') ?? documentProblem(block);
    case 'search_result':
      return onlyIn('user') ?? citationsProblem(block.citations);
    case 'thinking':
    case 'redacted_thinking':
      return `${block.type} blocks cannot be replayed to a chat-completions upstream`;
    default:
      return assertNever(block);
  }
}

function findToolResultProblem(
  content: ToolResultContentBlock[],
  field: string,
): UncarriableField | undefined {
  for (const [position, block] of content.entries()) {
    const reason = toolResultBlockProblem(block);
    if (reason !== undefined) return { field: `${field}.content[${position}]`, reason };
  }
  return undefined;
}

function toolResultBlockProblem(block: ToolResultContentBlock): string | undefined {
  switch (block.type) {
    case 'text':
      return undefined;
    case 'image':
      return 'a chat-completions tool message carries text only, not images';
    case 'document':
      return documentProblem(block);
    case 'search_result':
      return citationsProblem(block.citations);
    default:
      return assertNever(block);
  }
}

function imageProblem(sourceType: 'base64' | 'url' | 'file'): string | undefined {
  return sourceType === 'file'
    ? 'image source "file" needs a file store the chat wire does not share'
    : undefined;
}

function documentProblem(block: Extract<ContentBlockParam, { type: 'document' }>): string | undefined {
  if (block.source.type !== 'text') {
    return `document source "${block.source.type}" cannot be carried (only "text" documents can)`;
  }
  return citationsProblem(block.citations);
}

function citationsProblem(citations: { enabled?: boolean } | null | undefined): string | undefined {
  return citations?.enabled === true ? 'citations cannot be returned by chat-completions' : undefined;
}
