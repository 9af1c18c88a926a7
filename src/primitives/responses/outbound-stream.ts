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
import type { StreamEvent, Usage } from '../../canonical/types.js';
import { onBlockStart, onBlockStop, onDelta } from './outbound-blocks.js';
import { closeItem, Emitter, type Streaming } from './outbound-items.js';
import { type OutboundContext, responseObject, terminalOf } from './outbound-object.js';
import type { ResponsesServerEvent } from './server-events.js';

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
