/**
 * Canonical stream events -> responses-wire stream events, as an explicit state machine, for
 * /v1/responses with `stream: true` served by any target (protocols 3.6, 5.4).
 *
 * `step(state, event, context)` and `finish(state, context)` are pure. message_start -> created +
 * in_progress; each canonical block opens an output item (consecutive text blocks share one
 * `message` item, one output_text part each), its deltas become the item's deltas and its stop the
 * item's done events; message_stop closes the open item and sends completed or incomplete (per the
 * stop reason) with the whole Response, so the final object equals `canonicalToResponsesResponse`
 * of the same answer. A canonical `error`, or a stream that ends without message_stop, becomes
 * response.failed with the output so far. Nothing follows a terminal event.
 */
import type { ContentDelta, StopReason, StreamEvent, Usage } from '../../canonical/types.js';
import { doneItem, Emitter, functionCallItem, type OpenItem } from './outbound-items.js';
import {
  itemId,
  type OutboundContext,
  type OutputItem,
  type OutputTextPart,
  responseObject,
  terminalOf,
} from './outbound-object.js';
import type { ResponsesServerEvent } from './server-events.js';

type OpenBlock = 'text' | 'thinking' | 'tool_use' | 'skipped';

interface Streaming {
  phase: 'streaming';
  sequence: number;
  output: OutputItem[];
  item: OpenItem | undefined;
  block: OpenBlock | undefined;
  stopReason: StopReason | null;
  usage: Usage;
}

export type OutboundStreamState =
  | { phase: 'awaiting-start'; sequence: number }
  | Streaming
  | { phase: 'finished'; sequence: number };

export interface OutboundStep {
  state: OutboundStreamState;
  events: ResponsesServerEvent[];
}

export const INITIAL_OUTBOUND_STATE: OutboundStreamState = { phase: 'awaiting-start', sequence: 0 };

export function step(state: OutboundStreamState, event: StreamEvent, context: OutboundContext): OutboundStep {
  const out = new Emitter(state.sequence);
  const next = move(state, event, context, out);
  return { state: { ...next, sequence: out.sequence }, events: out.events };
}

/** The upstream stream ended: an answer that never reached message_stop is failed, never complete. */
export function finish(state: OutboundStreamState, context: OutboundContext): OutboundStep {
  if (state.phase === 'finished') return { state, events: [] };
  return step(
    state,
    {
      type: 'error',
      error: { type: 'api_error', message: 'the upstream stream ended before the answer was complete' },
    },
    context,
  );
}

function move(
  state: OutboundStreamState,
  event: StreamEvent,
  context: OutboundContext,
  out: Emitter,
): OutboundStreamState {
  switch (state.phase) {
    case 'finished':
      return state;
    case 'awaiting-start': {
      const started = start(context, out, event.type === 'message_start' ? event.message.usage : undefined);
      return event.type === 'message_start' ? started : onEvent(started, event, context, out);
    }
    case 'streaming':
      return onEvent(state, event, context, out);
    default: {
      const never: never = state;
      throw new Error(`unknown state ${JSON.stringify(never)}`);
    }
  }
}

function start(context: OutboundContext, out: Emitter, usage: Usage | undefined): Streaming {
  const state: Streaming = {
    phase: 'streaming',
    sequence: out.sequence,
    output: [],
    item: undefined,
    block: undefined,
    stopReason: null,
    usage: usage ?? {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
  const response = responseObject(context, { status: 'in_progress', output: [], usage: null });
  out.emit({ type: 'response.created', response });
  out.emit({ type: 'response.in_progress', response });
  return state;
}

function onEvent(
  state: Streaming,
  event: StreamEvent,
  context: OutboundContext,
  out: Emitter,
): OutboundStreamState {
  switch (event.type) {
    case 'message_start':
    case 'ping':
      return state;
    case 'content_block_start':
      return onBlockStart(state, event.content_block, context, out);
    case 'content_block_delta':
      return onDelta(state, event.delta, out);
    case 'content_block_stop':
      return onBlockStop(state, out);
    case 'message_delta':
      return { ...state, stopReason: event.delta.stop_reason, usage: { ...state.usage, ...event.usage } };
    case 'message_stop':
      return onMessageStop(state, context, out);
    case 'error':
      return onError(state, event.error, context, out);
    default: {
      const never: never = event;
      throw new Error(`unknown canonical event ${JSON.stringify(never)}`);
    }
  }
}

type StartedBlock = Extract<StreamEvent, { type: 'content_block_start' }>['content_block'];

function onBlockStart(
  state: Streaming,
  block: StartedBlock,
  context: OutboundContext,
  out: Emitter,
): Streaming {
  switch (block.type) {
    case 'text': {
      const opened =
        state.item?.kind === 'message'
          ? state
          : openItem(closeItem(state, 'completed', out), 'msg', context, out);
      const item = opened.item as Extract<OpenItem, { kind: 'message' }>;
      const part: OutputTextPart = { type: 'output_text', text: '', annotations: [] };
      const contentIndex = item.parts.length;
      out.emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: contentIndex,
        part: { ...part },
      });
      const next: Streaming = { ...opened, item: { ...item, parts: [...item.parts, part] }, block: 'text' };
      return block.text.length > 0 ? onDelta(next, { type: 'text_delta', text: block.text }, out) : next;
    }
    case 'thinking': {
      const opened = openItem(closeItem(state, 'completed', out), 'rs', context, out);
      const item = opened.item!;
      out.emit({
        type: 'response.reasoning_summary_part.added',
        item_id: item.id,
        output_index: item.outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      const next: Streaming = { ...opened, block: 'thinking' };
      return block.thinking.length > 0
        ? onDelta(next, { type: 'thinking_delta', thinking: block.thinking }, out)
        : next;
    }
    case 'tool_use': {
      const closed = closeItem(state, 'completed', out);
      const outputIndex = closed.output.length;
      const item: OpenItem = {
        kind: 'function_call',
        outputIndex,
        id: itemId(context, 'fc', outputIndex),
        callId: block.id,
        name: block.name,
        args: '',
      };
      out.emit({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: functionCallItem(item, 'in_progress'),
      });
      const next: Streaming = { ...closed, item, block: 'tool_use' };
      const initial = Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
      return initial.length > 0
        ? onDelta(next, { type: 'input_json_delta', partial_json: initial }, out)
        : next;
    }
    case 'redacted_thinking':
      return { ...state, block: 'skipped' };
    default: {
      const never: never = block;
      throw new Error(`unknown block ${JSON.stringify(never)}`);
    }
  }
}

function onDelta(state: Streaming, delta: ContentDelta, out: Emitter): Streaming {
  const item = state.item;
  if (state.block === 'skipped' || delta.type === 'signature_delta') return state;
  if (deltaText(delta).length === 0) return state;
  if (delta.type === 'text_delta' && state.block === 'text' && item?.kind === 'message') {
    const contentIndex = item.parts.length - 1;
    const parts = item.parts.map((part, index) =>
      index === contentIndex ? { ...part, text: part.text + delta.text } : part,
    );
    out.emit({
      type: 'response.output_text.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: contentIndex,
      delta: delta.text,
      logprobs: [],
    });
    return { ...state, item: { ...item, parts } };
  }
  if (delta.type === 'thinking_delta' && state.block === 'thinking' && item?.kind === 'reasoning') {
    out.emit({
      type: 'response.reasoning_summary_text.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      summary_index: 0,
      delta: delta.thinking,
    });
    return { ...state, item: { ...item, text: item.text + delta.thinking } };
  }
  if (delta.type === 'input_json_delta' && state.block === 'tool_use' && item?.kind === 'function_call') {
    out.emit({
      type: 'response.function_call_arguments.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      delta: delta.partial_json,
    });
    return { ...state, item: { ...item, args: item.args + delta.partial_json } };
  }
  throw new Error(`responses stream out: ${delta.type} does not fit the open block ${String(state.block)}`);
}

function deltaText(delta: Exclude<ContentDelta, { type: 'signature_delta' }>): string {
  switch (delta.type) {
    case 'text_delta':
      return delta.text;
    case 'thinking_delta':
      return delta.thinking;
    case 'input_json_delta':
      return delta.partial_json;
    default: {
      const never: never = delta;
      throw new Error(`unknown delta ${JSON.stringify(never)}`);
    }
  }
}

function onBlockStop(state: Streaming, out: Emitter): Streaming {
  const item = state.item;
  if (state.block === 'text' && item?.kind === 'message') {
    const contentIndex = item.parts.length - 1;
    const part = item.parts[contentIndex]!;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: contentIndex };
    out.emit({ type: 'response.output_text.done', ...where, text: part.text, logprobs: [] });
    out.emit({ type: 'response.content_part.done', ...where, part: { ...part } });
    return { ...state, block: undefined };
  }
  if (state.block === 'thinking' && item?.kind === 'reasoning') {
    const where = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
    out.emit({ type: 'response.reasoning_summary_text.done', ...where, text: item.text });
    out.emit({
      type: 'response.reasoning_summary_part.done',
      ...where,
      part: { type: 'summary_text', text: item.text },
    });
    return closeItem({ ...state, block: undefined }, 'completed', out);
  }
  if (state.block === 'tool_use' && item?.kind === 'function_call') {
    const args = item.args.length > 0 ? item.args : '{}';
    out.emit({
      type: 'response.function_call_arguments.done',
      item_id: item.id,
      output_index: item.outputIndex,
      name: item.name,
      arguments: args,
    });
    return closeItem({ ...state, item: { ...item, args }, block: undefined }, 'completed', out);
  }
  return { ...state, block: undefined };
}

function onMessageStop(state: Streaming, context: OutboundContext, out: Emitter): OutboundStreamState {
  const terminal = terminalOf(state.stopReason);
  const closed = closeItem(state, terminal.status === 'completed' ? 'completed' : 'incomplete', out);
  const response = responseObject(context, { ...terminal, output: closed.output, usage: closed.usage });
  out.emit({
    type: terminal.status === 'completed' ? 'response.completed' : 'response.incomplete',
    response,
  });
  return { phase: 'finished', sequence: out.sequence };
}

const ERROR_CODES: Record<string, string> = {
  rate_limit_error: 'rate_limit_exceeded',
  overloaded_error: 'server_error',
  api_error: 'server_error',
  invalid_request_error: 'invalid_prompt',
};

function onError(
  state: Streaming,
  error: { type: string; message: string },
  context: OutboundContext,
  out: Emitter,
): OutboundStreamState {
  const stopped = state.block === undefined ? state : onBlockStop(state, out);
  const closed = closeItem(stopped, 'incomplete', out);
  const response = responseObject(context, {
    status: 'failed',
    output: closed.output,
    usage: closed.usage,
    error: { code: ERROR_CODES[error.type] ?? 'server_error', message: error.message },
  });
  out.emit({ type: 'response.failed', response });
  return { phase: 'finished', sequence: out.sequence };
}

function openItem(state: Streaming, prefix: 'msg' | 'rs', context: OutboundContext, out: Emitter): Streaming {
  const outputIndex = state.output.length;
  const id = itemId(context, prefix, outputIndex);
  const item: OpenItem =
    prefix === 'msg'
      ? { kind: 'message', outputIndex, id, parts: [] }
      : { kind: 'reasoning', outputIndex, id, text: '' };
  out.emit({
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: doneItem(item, 'in_progress'),
  });
  return { ...state, item };
}

/** Sends output_item.done for the open item (if any) and moves it into the output. */
function closeItem(state: Streaming, status: 'completed' | 'incomplete', out: Emitter): Streaming {
  const item = state.item;
  if (item === undefined) return state;
  const done = doneItem(item, item.kind === 'function_call' ? 'completed' : status);
  out.emit({ type: 'response.output_item.done', output_index: item.outputIndex, item: done });
  return { ...state, item: undefined, output: [...state.output, done] };
}

/** A stateful wrapper for the gateway core: feed canonical events, then end. */
export interface OutboundStreamTranslator {
  push(event: StreamEvent): ResponsesServerEvent[];
  end(): ResponsesServerEvent[];
}

export function createOutboundStreamTranslator(context: OutboundContext): OutboundStreamTranslator {
  let state: OutboundStreamState = INITIAL_OUTBOUND_STATE;
  return {
    push(event) {
      const result = step(state, event, context);
      state = result.state;
      return result.events;
    },
    end() {
      const result = finish(state, context);
      state = result.state;
      return result.events;
    },
  };
}
