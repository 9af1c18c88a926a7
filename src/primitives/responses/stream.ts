/**
 * Responses stream -> canonical stream, as an explicit state machine.
 *
 * `step(state, event, context)` is pure. Canonical block indices are assigned in start order, which
 * is the order the non-streaming mapping puts blocks in (output items in order, parts in order), so
 * a reassembled stream equals `parseResponsesResponse` of the final response. One block is open at
 * a time (the wire streams items one after another). Terminal events: response.completed and
 * response.incomplete -> message_delta + message_stop; response.failed and `error` -> a canonical
 * `error` event and no message_stop. `end()` is complete only after one of those terminal events.
 */
import type { ContentDelta, StreamEvent, Usage } from '../../canonical/types.js';
import {
  frame,
  modelNamed,
  type SseEvent,
  type StreamTranslator,
  type TranslateContext,
  UpstreamProtocolError,
} from '../shared/types.js';
import { streamErrorType } from './error.js';
import { canonicalUsage, parseArguments, stopReasonOf } from './response.js';
import { decodeResponsesEvent, type ResponsesStreamEvent } from './stream-events.js';
import type { WireOutputItem, WireResponse } from './wire-types.js';

type NewBlock =
  | { kind: 'text'; key: string }
  | { kind: 'tool_use'; key: string; name: string; argumentsSent: string };
type OpenBlock = NewBlock & { index: number };
type StartedBlock = Extract<StreamEvent, { type: 'content_block_start' }>['content_block'];

export type ResponsesStreamState =
  | { phase: 'awaiting-created' }
  | {
      phase: 'streaming';
      nextIndex: number;
      open: OpenBlock | undefined;
      /** Keys of every block started so far, so a repeated or late event never starts a second one. */
      startedKeys: readonly string[];
      hasToolUse: boolean;
      hasRefusal: boolean;
    }
  | { phase: 'finished'; usage: Usage | undefined }
  | { phase: 'failed'; usage: Usage | undefined };

type Streaming = Extract<ResponsesStreamState, { phase: 'streaming' }>;

export interface StepResult {
  state: ResponsesStreamState;
  events: StreamEvent[];
}

/** What the handlers that keep the stream open return. */
interface Moved {
  state: Streaming;
  events: StreamEvent[];
}

export const INITIAL_RESPONSES_STREAM_STATE: ResponsesStreamState = { phase: 'awaiting-created' };

export function step(
  state: ResponsesStreamState,
  event: ResponsesStreamEvent,
  context: TranslateContext,
): StepResult {
  switch (state.phase) {
    case 'finished':
    case 'failed':
      return { state, events: [] };
    case 'awaiting-created': {
      // Lenient: a stream that skips response.created still gets its message_start first.
      const started = start(context);
      if (event.type === 'response.created') return started;
      const next = onEvent(started.state, event);
      return { state: next.state, events: [...started.events, ...next.events] };
    }
    case 'streaming':
      return onEvent(state, event);
    default:
      return unreachable(state);
  }
}

function start(context: TranslateContext): Moved {
  const message = {
    id: context.messageId,
    type: 'message' as const,
    role: 'assistant' as const,
    content: [],
    model: context.responseModel,
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  const state: Streaming = {
    phase: 'streaming',
    nextIndex: 0,
    open: undefined,
    startedKeys: [],
    hasToolUse: false,
    hasRefusal: false,
  };
  return { state, events: [{ type: 'message_start', message }] };
}

function onEvent(state: Streaming, event: ResponsesStreamEvent): StepResult {
  switch (event.type) {
    case 'response.created':
      return { state, events: [] };
    case 'response.output_item.added':
      return onItemAdded(state, event.outputIndex, event.item);
    case 'response.content_part.added':
      return onPartAdded(state, event);
    case 'response.output_text.delta':
    case 'response.refusal.delta':
      return onTextDelta(state, event);
    case 'response.content_part.done':
      return closeIf(state, textKey(event.outputIndex, event.contentIndex));
    case 'response.function_call_arguments.delta':
      return onArgumentsDelta(state, toolKey(event.outputIndex), event.delta);
    case 'response.function_call_arguments.done':
      return catchUpArguments(state, toolKey(event.outputIndex), event.arguments);
    case 'response.output_item.done':
      return onItemDone(state, event.outputIndex, event.item);
    case 'response.completed':
    case 'response.incomplete':
      return onFinished(state, event.response);
    case 'response.failed':
      return onFailed(state, event.response.error ?? {}, canonicalUsage(event.response.usage));
    case 'error':
      return onFailed(state, event.error, undefined);
    default:
      return unreachable(event);
  }
}

function onItemAdded(state: Streaming, outputIndex: number, item: WireOutputItem): Moved {
  if (item.type !== 'function_call') return { state, events: [] };
  const { call_id: callId, name, arguments: args } = item as Record<string, unknown>;
  if (typeof callId !== 'string' || typeof name !== 'string') {
    throw new UpstreamProtocolError('responses stream: a function_call item lacks call_id or name');
  }
  const key = toolKey(outputIndex);
  if (state.startedKeys.includes(key)) return { state, events: [] };
  const opened = openBlock(
    state,
    { kind: 'tool_use', key, name, argumentsSent: '' },
    { type: 'tool_use', id: callId, name, input: {} },
  );
  const withFlag: Streaming = { ...opened.state, hasToolUse: true };
  const caughtUp = catchUpArguments(withFlag, key, typeof args === 'string' ? args : '');
  return { state: caughtUp.state, events: [...opened.events, ...caughtUp.events] };
}

function onPartAdded(
  state: Streaming,
  event: Extract<ResponsesStreamEvent, { type: 'response.content_part.added' }>,
): Moved {
  if (event.partType !== 'output_text' && event.partType !== 'refusal') return { state, events: [] };
  const key = textKey(event.outputIndex, event.contentIndex);
  if (state.startedKeys.includes(key)) return { state, events: [] };
  const opened = openBlock(state, { kind: 'text', key }, { type: 'text', text: '' });
  const next: Streaming = {
    ...opened.state,
    hasRefusal: state.hasRefusal || event.partType === 'refusal',
  };
  if (event.text.length === 0) return { state: next, events: opened.events };
  return { state: next, events: [...opened.events, delta(next, { type: 'text_delta', text: event.text })] };
}

function onTextDelta(
  state: Streaming,
  event: Extract<ResponsesStreamEvent, { type: 'response.output_text.delta' | 'response.refusal.delta' }>,
): Moved {
  const key = textKey(event.outputIndex, event.contentIndex);
  const refusal = state.hasRefusal || event.type === 'response.refusal.delta';
  if (state.open?.key === key) {
    return {
      state: { ...state, hasRefusal: refusal },
      events: [delta(state, { type: 'text_delta', text: event.delta })],
    };
  }
  if (state.startedKeys.includes(key))
    throw new UpstreamProtocolError('responses stream: text delta for a closed part');
  // Lenient: a delta without its content_part.added starts the block itself.
  const opened = openBlock(state, { kind: 'text', key }, { type: 'text', text: '' });
  const next: Streaming = { ...opened.state, hasRefusal: refusal };
  return { state: next, events: [...opened.events, delta(next, { type: 'text_delta', text: event.delta })] };
}

function onArgumentsDelta(state: Streaming, key: string, fragment: string): Moved {
  const open = state.open;
  if (open?.kind !== 'tool_use' || open.key !== key) {
    throw new UpstreamProtocolError('responses stream: function-call arguments for an item that is not open');
  }
  const next: Streaming = { ...state, open: { ...open, argumentsSent: open.argumentsSent + fragment } };
  return {
    state: next,
    events: fragment.length > 0 ? [delta(state, { type: 'input_json_delta', partial_json: fragment })] : [],
  };
}

/** Sends whatever part of the complete arguments text the deltas have not carried yet. */
function catchUpArguments(state: Streaming, key: string, complete: string): Moved {
  const open = state.open;
  if (open?.kind !== 'tool_use' || open.key !== key) return { state, events: [] };
  if (!complete.startsWith(open.argumentsSent)) {
    throw new UpstreamProtocolError('responses stream: function-call arguments disagree with their deltas');
  }
  return onArgumentsDelta(state, key, complete.slice(open.argumentsSent.length));
}

function onItemDone(state: Streaming, outputIndex: number, item: WireOutputItem): Moved {
  if (item.type === 'message') {
    const open = state.open;
    return open?.kind === 'text' && open.key.startsWith(`${outputIndex}/`)
      ? closeIf(state, open.key)
      : { state, events: [] };
  }
  if (item.type !== 'function_call') return { state, events: [] };
  const key = toolKey(outputIndex);
  // An item whose output_item.added never came is started here, whole.
  const added = state.startedKeys.includes(key)
    ? { state, events: [] }
    : onItemAdded(state, outputIndex, item);
  const args = (item as Record<string, unknown>).arguments;
  const caughtUp = catchUpArguments(added.state, key, typeof args === 'string' ? args : '');
  const open = caughtUp.state.open;
  if (open?.kind === 'tool_use' && open.key === key) parseArguments(open.argumentsSent, open.name);
  const closed = closeIf(caughtUp.state, key);
  return { state: closed.state, events: [...added.events, ...caughtUp.events, ...closed.events] };
}

function onFinished(state: Streaming, response: WireResponse): StepResult {
  const closed = closeIf(state, state.open?.key);
  const usage = canonicalUsage(response.usage);
  const stopReason = stopReasonOf({ response, hasToolUse: state.hasToolUse, hasRefusal: state.hasRefusal });
  const events: StreamEvent[] = [
    ...closed.events,
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: usage ?? { output_tokens: 0 },
    },
    { type: 'message_stop' },
  ];
  return { state: { phase: 'finished', usage }, events };
}

function onFailed(
  _state: Streaming,
  error: { code?: string | null; message?: string },
  usage: Usage | undefined,
): StepResult {
  const code = typeof error.code === 'string' ? error.code : undefined;
  const message =
    typeof error.message === 'string' && error.message.length > 0
      ? error.message
      : 'upstream response failed';
  const event: StreamEvent = { type: 'error', error: { type: streamErrorType(code), message } };
  return { state: { phase: 'failed', usage }, events: [event] };
}

function openBlock(state: Streaming, block: NewBlock, contentBlock: StartedBlock): Moved {
  const closed = closeIf(state, state.open?.key);
  const index = state.nextIndex;
  const next: Streaming = {
    ...closed.state,
    nextIndex: index + 1,
    open: { ...block, index },
    startedKeys: [...state.startedKeys, block.key],
  };
  return {
    state: next,
    events: [...closed.events, { type: 'content_block_start', index, content_block: contentBlock }],
  };
}

function closeIf(state: Streaming, key: string | undefined): Moved {
  if (key === undefined || state.open?.key !== key) return { state, events: [] };
  return {
    state: { ...state, open: undefined },
    events: [{ type: 'content_block_stop', index: state.open.index }],
  };
}

function delta(state: Streaming, content: ContentDelta): StreamEvent {
  if (state.open === undefined) throw new Error('responses stream: delta without an open block');
  return { type: 'content_block_delta', index: state.open.index, delta: content };
}

const textKey = (outputIndex: number, contentIndex: number): string => `${outputIndex}/${contentIndex}`;
const toolKey = (outputIndex: number): string => `${outputIndex}`;

export function createResponsesStreamTranslator(context: TranslateContext): StreamTranslator {
  let state: ResponsesStreamState = INITIAL_RESPONSES_STREAM_STATE;
  let model: string | undefined;
  return {
    push(sse: SseEvent) {
      const event = decodeResponsesEvent(sse);
      if (event === undefined) return [];
      if (model === undefined && 'response' in event) model = modelNamed(event.response);
      const result = step(state, event, context);
      state = result.state;
      return result.events.map(frame);
    },
    end() {
      return { frames: [], complete: state.phase === 'finished' || state.phase === 'failed' };
    },
    usage() {
      return state.phase === 'finished' || state.phase === 'failed' ? state.usage : undefined;
    },
    answeredModel: () => model,
  };
}

function unreachable(value: never): never {
  throw new Error(`unhandled stream value ${JSON.stringify(value)}`);
}
