/**
 * Canonical conversation -> chat-completions `messages`.
 *
 * - `system` becomes the first `system` message (text blocks joined with "\n"; cache_control dropped:
 *   it is a caching hint with no effect on the answer).
 * - A user turn becomes one `tool` message per tool_result, in order, then one `user` message with
 *   the remaining blocks (the chat wire wants tool answers right after the assistant's calls).
 * - An assistant turn becomes one `assistant` message: text joined with "\n" (null when there is
 *   none) and `tool_calls` with ids kept verbatim so the next turn's tool_call_id still matches.
 * Callers run `findChatUncarriable` first; the branches that throw here are unreachable after it.
 */
import type {
  ContentBlockParam,
  DocumentBlock,
  MessageParam,
  SearchResultBlock,
  TextBlock,
  ToolResultBlock,
  ToolResultContentBlock,
  ToolUseBlock,
} from '../../canonical/types.js';
import { assertNever } from './assert-never.js';
import { CannotCarryError } from './cannot-carry.js';
import type { ChatMessage, ChatToolCall, ChatUserPart } from './wire-types.js';

/** Prefix that keeps the `is_error` signal of a tool_result: the tool message has no error flag. */
export const TOOL_ERROR_PREFIX = 'Error: ';

export function systemMessage(system: string | TextBlock[] | undefined): ChatMessage[] {
  if (system === undefined) return [];
  const text = typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
  return text.length === 0 ? [] : [{ role: 'system', content: text }];
}

export function conversationMessages(messages: MessageParam[]): ChatMessage[] {
  return messages.flatMap((message, messageIndex) => {
    const blocks: ContentBlockParam[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const field = `messages[${messageIndex}]`;
    return message.role === 'user' ? userTurn(blocks, field) : assistantTurn(blocks, field);
  });
}

function userTurn(blocks: ContentBlockParam[], field: string): ChatMessage[] {
  const toolMessages: ChatMessage[] = [];
  const parts: ChatUserPart[] = [];
  for (const [position, block] of blocks.entries()) {
    if (block.type === 'tool_result') toolMessages.push(toolMessage(block));
    else parts.push(userPart(block, `${field}.content[${position}]`));
  }
  if (parts.length === 0) return toolMessages;
  const only = parts[0];
  const content = parts.length === 1 && only?.type === 'text' ? only.text : parts;
  return [...toolMessages, { role: 'user', content }];
}

function userPart(block: ContentBlockParam, field: string): ChatUserPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      switch (block.source.type) {
        case 'base64':
          return {
            type: 'image_url',
            image_url: { url: `data:${block.source.media_type};base64,${block.source.data}` },
          };
        case 'url':
          return { type: 'image_url', image_url: { url: block.source.url } };
        case 'file':
          throw new CannotCarryError(`${field}.source`, 'image source "file" cannot be carried');
        default:
          return assertNever(block.source);
      }
    case 'document':
      return { type: 'text', text: documentText(block, field) };
    case 'search_result':
      return { type: 'text', text: searchResultText(block) };
    case 'tool_use':
    case 'tool_result':
    case 'thinking':
    case 'redacted_thinking':
      throw new CannotCarryError(field, `a ${block.type} block in a user message cannot be carried`);
    default:
      return assertNever(block);
  }
}

function toolMessage(block: ToolResultBlock): ChatMessage {
  const text = toolResultText(block);
  const content = block.is_error === true ? `${TOOL_ERROR_PREFIX}${text}` : text;
  return { role: 'tool', tool_call_id: block.tool_use_id, content };
}

/** A tool message carries one string: several result blocks are joined with "\n". */
function toolResultText(block: ToolResultBlock): string {
  if (block.content === undefined) return '';
  if (typeof block.content === 'string') return block.content;
  return block.content
    .map((part, position) => toolResultPartText(part, `tool_result.content[${position}]`))
    .join('\n');
}

function toolResultPartText(block: ToolResultContentBlock, field: string): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'document':
      return documentText(block, field);
    case 'search_result':
      return searchResultText(block);
    case 'image':
      throw new CannotCarryError(field, 'a chat-completions tool message carries text only, not images');
    default:
      return assertNever(block);
  }
}

/** A text document is carried as its title, its context, then its text, separated by blank lines. */
function documentText(block: DocumentBlock, field: string): string {
  if (block.source.type !== 'text') {
    throw new CannotCarryError(`${field}.source`, `document source "${block.source.type}" cannot be carried`);
  }
  return [block.title, block.context, block.source.data].filter(isPresent).join('\n\n');
}

/** A search result is carried as its title and source, then its text blocks (citations not asked). */
function searchResultText(block: SearchResultBlock): string {
  return [block.title, block.source, block.content.map((text) => text.text).join('\n')].join('\n\n');
}

function assistantTurn(blocks: ContentBlockParam[], field: string): ChatMessage[] {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const [position, block] of blocks.entries()) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use') toolCalls.push(toolCall(block));
    else
      throw new CannotCarryError(
        `${field}.content[${position}]`,
        `a ${block.type} block in an assistant message cannot be carried`,
      );
  }
  if (texts.length === 0 && toolCalls.length === 0) return [];
  const content = texts.length === 0 ? null : texts.join('\n');
  return [
    toolCalls.length === 0
      ? { role: 'assistant', content }
      : { role: 'assistant', content, tool_calls: toolCalls },
  ];
}

function toolCall(block: ToolUseBlock): ChatToolCall {
  return {
    id: block.id,
    type: 'function',
    function: { name: block.name, arguments: JSON.stringify(block.input) },
  };
}

function isPresent(value: string | null | undefined): value is string {
  return value !== undefined && value !== null && value.length > 0;
}
