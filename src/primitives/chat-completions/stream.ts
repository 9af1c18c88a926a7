/**
 * Chat-completions stream (`chat.completion.chunk` frames, then `data: [DONE]`) -> canonical
 * stream events, as an explicit state machine.
 *
 * Phases: before_first_chunk -> streaming -> awaiting_usage -> finished.
 * - The first chunk emits message_start (usage zeros: the chat wire reports usage only at the end).
 * - While streaming, deltas become content blocks (stream-blocks.ts).
 * - finish_reason closes every block and fixes the stop reason. With include_usage the usage chunk
 *   (`choices: []`) comes after it, so message_delta (stop reason + cumulative usage) and
 *   message_stop wait until the usage chunk or `[DONE]` arrives (awaiting_usage).
 * - An upstream that closes before any finish_reason is incomplete: `finish` reports complete:false
 *   and emits nothing, so the core sends an SSE error and never a clean message_stop.
 * Chunks after finish_reason only contribute usage; chunks after message_stop are ignored.
 */
import type { StopReason, StreamEvent, Usage } from '../../canonical/types.js';
import { ZERO_USAGE } from '../../canonical/types.js';
import {
  type ClientFrame,
  frame,
  modelNamed,
  type SseEvent,
  type StreamTranslator,
  type TranslateContext,
  UpstreamProtocolError,
} from '../shared/types.js';
import { assertNever } from './assert-never.js';
import type { ChatOptions } from './options.js';
import { stopReasonOf } from './stop-reason.js';
import {
  addText,
  addToolCallDelta,
  type Blocks,
  closeAll,
  copyBlocks,
  emptyBlocks,
} from './stream-blocks.js';
import { plainText, shapedText, type TextChunkShape, textChunkShape } from './text-chunk.js';
import { canonicalUsage, isChatUsage } from './usage.js';
import type { ChatChunkChoice, ChatCompletionChunk } from './wire-types.js';

export type ChatStreamState =
  | { phase: 'before_first_chunk' }
  | { phase: 'streaming'; blocks: Blocks; usage: Usage | undefined }
  | { phase: 'awaiting_usage'; stopReason: StopReason; usage: undefined }
  | { phase: 'finished'; usage: Usage | undefined };

/** One upstream frame: a parsed chunk, or the `[DONE]` terminator. */
export type ChatStreamInput = { kind: 'chunk'; chunk: ChatCompletionChunk } | { kind: 'done' };

export interface StepResult {
  state: ChatStreamState;
  events: StreamEvent[];
}

export const INITIAL_CHAT_STREAM_STATE: ChatStreamState = Object.freeze({ phase: 'before_first_chunk' });

export function step(state: ChatStreamState, input: ChatStreamInput, context: TranslateContext): StepResult {
  switch (input.kind) {
    case 'chunk':
      return onChunk(state, input.chunk, context);
    case 'done':
      return onDone(state);
    default:
      return assertNever(input, 'stream input');
  }
}

/** The upstream closed: flush what can be flushed and say whether the stream was complete. */
export function finish(state: ChatStreamState): StepResult & { complete: boolean } {
  switch (state.phase) {
    case 'before_first_chunk':
    case 'streaming':
      return { state, events: [], complete: false };
    case 'awaiting_usage':
      return { ...onDone(state), complete: true };
    case 'finished':
      return { state, events: [], complete: true };
    default:
      return assertNever(state, 'stream state');
  }
}

export function usageOf(state: ChatStreamState): Usage | undefined {
  return state.phase === 'before_first_chunk' ? undefined : state.usage;
}

function onChunk(state: ChatStreamState, chunk: ChatCompletionChunk, context: TranslateContext): StepResult {
  if (chunk.error !== undefined && chunk.error !== null) {
    throw new UpstreamProtocolError(`upstream stream error: ${chunk.error.message ?? 'unknown error'}`);
  }
  switch (state.phase) {
    case 'before_first_chunk': {
      const started = onChunk(
        { phase: 'streaming', blocks: emptyBlocks(), usage: undefined },
        chunk,
        context,
      );
      return { state: started.state, events: [messageStart(context), ...started.events] };
    }
    case 'streaming':
      return onStreamingChunk(state, chunk, context);
    case 'awaiting_usage':
      return isChatUsage(chunk.usage)
        ? stopMessage(state.stopReason, canonicalUsage(chunk.usage))
        : { state, events: [] };
    case 'finished':
      return { state, events: [] };
    default:
      return assertNever(state, 'stream state');
  }
}

function onStreamingChunk(
  state: Extract<ChatStreamState, { phase: 'streaming' }>,
  chunk: ChatCompletionChunk,
  context: TranslateContext,
): StepResult {
  const blocks = copyBlocks(state.blocks);
  const events: StreamEvent[] = [];
  const usage = isChatUsage(chunk.usage) ? canonicalUsage(chunk.usage) : state.usage;
  const choice = firstChoice(chunk);
  if (choice === undefined) return { state: { ...state, blocks, usage }, events };

  addText(blocks, textOf(choice.delta?.content), events);
  const refusal = textOf(choice.delta?.refusal);
  if (refusal.length > 0) blocks.refused = true;
  addText(blocks, refusal, events);
  for (const toolCall of choice.delta?.tool_calls ?? [])
    addToolCallDelta(blocks, toolCall, context.messageId, events);

  const finishReason = choice.finish_reason;
  if (finishReason === undefined || finishReason === null)
    return { state: { ...state, blocks, usage }, events };
  closeAll(blocks, context.messageId, events);
  const stopReason = stopReasonOf(finishReason, {
    hasToolCalls: blocks.toolCallsSeen > 0,
    refused: blocks.refused,
  });
  if (usage === undefined) return { state: { phase: 'awaiting_usage', stopReason, usage }, events };
  const stopped = stopMessage(stopReason, usage);
  return { state: stopped.state, events: [...events, ...stopped.events] };
}

function onDone(state: ChatStreamState): StepResult {
  switch (state.phase) {
    case 'awaiting_usage':
      return stopMessage(state.stopReason, undefined);
    case 'before_first_chunk':
    case 'streaming':
    case 'finished':
      return { state, events: [] };
    default:
      return assertNever(state, 'stream state');
  }
}

/** message_delta carries cumulative totals (zeros when the upstream never reported usage). */
function stopMessage(stopReason: StopReason, usage: Usage | undefined): StepResult {
  const totals = usage ?? ZERO_USAGE;
  return {
    state: { phase: 'finished', usage },
    events: [
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { ...totals },
      },
      { type: 'message_stop' },
    ],
  };
}

function messageStart(context: TranslateContext): StreamEvent {
  return {
    type: 'message_start',
    message: {
      id: context.messageId,
      type: 'message',
      role: 'assistant',
      content: [],
      model: context.responseModel,
      stop_reason: null,
      stop_sequence: null,
      usage: { ...ZERO_USAGE },
    },
  };
}

/** Only choice 0 is read (the gateway never asks for n > 1). */
function firstChoice(chunk: ChatCompletionChunk): ChatChunkChoice | undefined {
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  return choices.find((choice) => choice.index === 0) ?? choices[0];
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `[DONE]` ends the stream; SSE comments never reach us; an `event: error` frame is an upstream failure. */
export function parseChatSseEvent(event: SseEvent): ChatStreamInput | undefined {
  const data = event.data.trim();
  if (event.event === 'error') throw new UpstreamProtocolError(`upstream stream error: ${data}`);
  if (data.length === 0) return undefined;
  if (data === '[DONE]') return { kind: 'done' };
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new UpstreamProtocolError('chat stream frame is not valid JSON');
  }
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
    throw new UpstreamProtocolError('chat stream frame is not a JSON object');
  }
  return { kind: 'chunk', chunk: chunk as ChatCompletionChunk };
}

/** A text delta's frame: JSON.stringify of the text alone, byte for byte the event's serialisation. */
function textDeltaFrame(index: number, text: string): ClientFrame {
  return {
    event: 'content_block_delta',
    data: `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}`,
  };
}

/** `frame(event)`; a text delta, most of a stream's events, is written around its text alone. */
function frameOf(event: StreamEvent): ClientFrame {
  if (event.type !== 'content_block_delta' || event.delta.type !== 'text_delta') return frame(event);
  return textDeltaFrame(event.index, event.delta.text);
}

/**
 * The state machine above, fed event by event. A chunk of the stream's plain text shape
 * (text-chunk.ts) that continues the open text block is read without parsing the whole chunk: the
 * step would give the same state and one text delta (or nothing for an empty text).
 */
class ChatStreamTranslator implements StreamTranslator {
  private state: ChatStreamState = INITIAL_CHAT_STREAM_STATE;
  private model: string | undefined;
  private shape: TextChunkShape | undefined;
  /** Whether a plain text chunk may still give the shape (one try: a chunk that does not fit ends it). */
  private learning = true;
  /** The text of the last chunk `continuedTextBlock` read. */
  private shaped = '';

  constructor(private readonly context: TranslateContext) {}

  /** The open text block's index when `event` is a chunk of the shape continuing it (its text in `shaped`), else -1. */
  private continuedTextBlock(event: SseEvent): number {
    const { shape, state } = this;
    if (shape === undefined || event.event !== undefined || state.phase !== 'streaming') return -1;
    const { open, toolCallsSeen } = state.blocks;
    if (open?.kind !== 'text' || toolCallsSeen > 0) return -1;
    const text = shapedText(shape, event.data);
    if (text === undefined) return -1;
    this.shaped = text;
    return open.blockIndex;
  }

  private events(event: SseEvent): StreamEvent[] {
    const input = parseChatSseEvent(event);
    if (input === undefined) return [];
    if (input.kind === 'chunk') {
      if (this.model === undefined) this.model = modelNamed(input.chunk);
      if (this.learning && this.model !== undefined && plainText(input.chunk) !== undefined) {
        this.learning = false;
        this.shape = textChunkShape(event.data, input.chunk);
      }
    }
    const result = step(this.state, input, this.context);
    this.state = result.state;
    return result.events;
  }

  push(event: SseEvent): ClientFrame[] {
    const index = this.continuedTextBlock(event);
    if (index !== -1) return this.shaped.length === 0 ? [] : [textDeltaFrame(index, this.shaped)];
    return this.events(event).map(frameOf);
  }

  pushEvents(event: SseEvent): StreamEvent[] {
    const index = this.continuedTextBlock(event);
    if (index === -1) return this.events(event);
    if (this.shaped.length === 0) return [];
    return [{ type: 'content_block_delta', index, delta: { type: 'text_delta', text: this.shaped } }];
  }

  end(): { frames: ClientFrame[]; complete: boolean } {
    const { events, complete } = this.endEvents();
    return { frames: events.map(frame), complete };
  }

  endEvents(): { events: StreamEvent[]; complete: boolean } {
    const result = finish(this.state);
    this.state = result.state;
    return { events: result.events, complete: result.complete };
  }

  usage(): Usage | undefined {
    return usageOf(this.state);
  }

  answeredModel(): string | undefined {
    return this.model;
  }
}

export function createChatStreamTranslator(
  context: TranslateContext,
  _options: ChatOptions,
): StreamTranslator & Required<Pick<StreamTranslator, 'pushEvents' | 'endEvents'>> {
  return new ChatStreamTranslator(context);
}
