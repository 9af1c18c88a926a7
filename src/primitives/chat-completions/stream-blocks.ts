/**
 * Content-block bookkeeping of the chat stream translator: turns chat deltas (text, refusal, tool
 * call fragments) into canonical content_block_start / delta / stop events.
 *
 * Invariants: at most one block is open; block indices are handed out in content_block_start order
 * (so they equal positions in the final content array); a closed block never receives a delta.
 *
 * Tool calls whose fragments interleave (chat index 0, 1, 0, ...) are legal on the chat wire. The
 * scheme: the first call streams live in its own block; fragments of any other call are buffered
 * (the call waits). The open call is closed as soon as another call is waiting and its arguments
 * already form a whole JSON object (nothing valid can follow one); the next waiting call then
 * starts, its buffered arguments going out as one delta, and streams live from there. Calls that
 * never complete early are flushed at finish_reason. A non-blank fragment for an already closed
 * call can only make its arguments invalid JSON, so it is an UpstreamProtocolError.
 *
 * Text that arrives after the first tool call is kept and emitted as one text block after the tool
 * blocks at finish_reason (chat models put text first; this keeps blocks closed in order).
 */
import type { ResponseContentBlock, StreamEvent } from '../../canonical/types.js';
import { UpstreamProtocolError } from '../shared/types.js';
import { fallbackToolUseId, isCompleteJsonObject, parseToolArguments } from './tool-calls.js';
import type { ChatDeltaToolCall } from './wire-types.js';

/** A tool call seen on the wire, keyed by its chat `index` (its position among tool calls). */
export interface ToolCallProgress {
  chatIndex: number;
  id: string | undefined;
  name: string | undefined;
  arguments: string;
}

export type OpenBlock =
  | { kind: 'text'; blockIndex: number }
  | { kind: 'tool'; blockIndex: number; call: ToolCallProgress };

export interface Blocks {
  nextBlockIndex: number;
  open: OpenBlock | undefined;
  /** Calls seen whose block has not started, in order of first appearance. */
  waiting: ToolCallProgress[];
  /** Calls whose block is closed. */
  closed: ToolCallProgress[];
  /** Text that arrived after the first tool call (see the module header). */
  trailingText: string;
  toolCallsSeen: number;
  refused: boolean;
}

export function emptyBlocks(): Blocks {
  return {
    nextBlockIndex: 0,
    open: undefined,
    waiting: [],
    closed: [],
    trailingText: '',
    toolCallsSeen: 0,
    refused: false,
  };
}

/** A copy the step function may change without touching the state it was given (it runs per chunk). */
export function copyBlocks(blocks: Blocks): Blocks {
  const open: OpenBlock | undefined =
    blocks.open?.kind === 'tool' ? { ...blocks.open, call: copyCall(blocks.open.call) } : blocks.open;
  return {
    nextBlockIndex: blocks.nextBlockIndex,
    open,
    waiting: blocks.waiting.length === 0 ? [] : blocks.waiting.map(copyCall),
    closed: blocks.closed.length === 0 ? [] : blocks.closed.map(copyCall),
    trailingText: blocks.trailingText,
    toolCallsSeen: blocks.toolCallsSeen,
    refused: blocks.refused,
  };
}

function copyCall(call: ToolCallProgress): ToolCallProgress {
  return { ...call };
}

export function addText(blocks: Blocks, text: string, events: StreamEvent[]): void {
  if (text.length === 0) return;
  if (blocks.toolCallsSeen > 0) {
    blocks.trailingText += text;
    return;
  }
  const open = blocks.open ?? startTextBlock(blocks, events);
  events.push({ type: 'content_block_delta', index: open.blockIndex, delta: { type: 'text_delta', text } });
}

export function addToolCallDelta(
  blocks: Blocks,
  delta: ChatDeltaToolCall,
  messageId: string,
  events: StreamEvent[],
): void {
  const chatIndex = chatIndexOf(blocks, delta);
  const fragment = typeof delta.function?.arguments === 'string' ? delta.function.arguments : '';
  const open = blocks.open;
  if (open?.kind === 'tool' && open.call.chatIndex === chatIndex) {
    open.call.arguments += fragment;
    if (fragment.length > 0) events.push(jsonDelta(open.blockIndex, fragment));
  } else if (blocks.closed.some((call) => call.chatIndex === chatIndex)) {
    if (fragment.trim().length > 0) {
      throw new UpstreamProtocolError(
        `tool call ${chatIndex} sent arguments after its JSON object was complete`,
      );
    }
  } else {
    const waiting =
      blocks.waiting.find((call) => call.chatIndex === chatIndex) ?? newWaitingCall(blocks, chatIndex);
    waiting.id ??= nonEmpty(delta.id);
    waiting.name ??= nonEmpty(delta.function?.name);
    waiting.arguments += fragment;
  }
  advance(blocks, messageId, events);
}

/** Close every block and flush waiting calls and trailing text (on finish_reason). */
export function closeAll(blocks: Blocks, messageId: string, events: StreamEvent[]): void {
  closeOpen(blocks, events);
  for (const call of blocks.waiting.splice(0)) {
    startToolBlock(blocks, call, messageId, events);
    closeOpen(blocks, events);
  }
  if (blocks.trailingText.length > 0) {
    const text = blocks.trailingText;
    blocks.trailingText = '';
    const open = startTextBlock(blocks, events);
    events.push({ type: 'content_block_delta', index: open.blockIndex, delta: { type: 'text_delta', text } });
    closeOpen(blocks, events);
  }
}

/** Move on to the next waiting call when the open block can close (see the module header). */
function advance(blocks: Blocks, messageId: string, events: StreamEvent[]): void {
  for (;;) {
    const next = blocks.waiting[0];
    const open = blocks.open;
    if (next === undefined) return;
    if (open === undefined) {
      if (next.name === undefined) return;
      blocks.waiting.shift();
      startToolBlock(blocks, next, messageId, events);
    } else if (open.kind === 'text' || (next.name !== undefined && argumentsComplete(open.call.arguments))) {
      closeOpen(blocks, events);
    } else {
      return;
    }
  }
}

/** Cheap test first: a whole JSON object ends with "}", so most fragments skip the parse. */
function argumentsComplete(argumentsText: string): boolean {
  return argumentsText.trimEnd().endsWith('}') && isCompleteJsonObject(argumentsText);
}

function startToolBlock(
  blocks: Blocks,
  call: ToolCallProgress,
  messageId: string,
  events: StreamEvent[],
): void {
  if (call.name === undefined)
    throw new UpstreamProtocolError(`tool call ${call.chatIndex} has no function name`);
  const id = call.id ?? fallbackToolUseId(messageId, call.chatIndex);
  call.id = id;
  const blockIndex = startBlock(blocks, { type: 'tool_use', id, name: call.name, input: {} }, events);
  blocks.open = { kind: 'tool', blockIndex, call };
  if (call.arguments.length > 0) events.push(jsonDelta(blockIndex, call.arguments));
}

function startBlock(blocks: Blocks, contentBlock: ResponseContentBlock, events: StreamEvent[]): number {
  const blockIndex = blocks.nextBlockIndex;
  blocks.nextBlockIndex += 1;
  events.push({ type: 'content_block_start', index: blockIndex, content_block: contentBlock });
  return blockIndex;
}

function startTextBlock(blocks: Blocks, events: StreamEvent[]): OpenBlock {
  const open: OpenBlock = {
    kind: 'text',
    blockIndex: startBlock(blocks, { type: 'text', text: '' }, events),
  };
  blocks.open = open;
  return open;
}

/** Closing a tool block checks its arguments: the canonical input must be a JSON object. */
function closeOpen(blocks: Blocks, events: StreamEvent[]): void {
  const open = blocks.open;
  if (open === undefined) return;
  if (open.kind === 'tool') {
    parseToolArguments(open.call.arguments, open.call.name ?? `#${open.call.chatIndex}`);
    blocks.closed.push(open.call);
  }
  events.push({ type: 'content_block_stop', index: open.blockIndex });
  blocks.open = undefined;
}

function newWaitingCall(blocks: Blocks, chatIndex: number): ToolCallProgress {
  const call: ToolCallProgress = { chatIndex, id: undefined, name: undefined, arguments: '' };
  blocks.waiting.push(call);
  blocks.toolCallsSeen += 1;
  return call;
}

/**
 * `index` is required on the wire; when a vendor leaves it out, a delta with an unseen id is a new
 * call and anything else continues the most recent call.
 */
function chatIndexOf(blocks: Blocks, delta: ChatDeltaToolCall): number {
  if (typeof delta.index === 'number') return delta.index;
  const known = [
    ...blocks.closed,
    ...(blocks.open?.kind === 'tool' ? [blocks.open.call] : []),
    ...blocks.waiting,
  ];
  const byId = known.find((call) => delta.id !== undefined && call.id === delta.id);
  if (byId !== undefined) return byId.chatIndex;
  const highest = Math.max(-1, ...known.map((call) => call.chatIndex));
  return delta.id !== undefined || highest < 0 ? highest + 1 : highest;
}

function jsonDelta(index: number, partialJson: string): StreamEvent {
  return {
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
