/**
 * Messages-wire stream -> client frames: a pass-through. The upstream already speaks the canonical
 * events, so content events go out as the same bytes they came in as (no JSON parse or stringify of
 * deltas; this is the hot path). Only three events are read:
 *   message_start  id -> context.messageId, model -> context.responseModel; usage recorded
 *   message_delta  cumulative usage merged (non-null values overwrite, never add)
 *   error          forwarded when it is a well-formed vendora error, else rewritten as api_error
 * State machine: awaiting_start -> streaming -> stopped (message_stop) | failed (error). Content
 * before message_start or a second message_start is a protocol error. Events after the end are
 * ignored. Unknown event names are dropped (the wire says clients must ignore them). `end()` is
 * complete only after message_stop. `forwards` names the content events of the streaming phase, whose
 * bytes the core passes on without decoding them (primitives/shared/sse.ts, createSseForwarder).
 */
import type { ErrorType, StreamEvent, Usage } from '../../canonical/types.js';
import {
  type ClientFrame,
  modelNamed,
  type SseEvent,
  type StreamTranslator,
  type TranslateContext,
  UpstreamProtocolError,
} from '../shared/types.js';
import { assertNever } from './assert-never.js';
import { isRecord, mergeCumulativeUsage, normaliseUsage } from './usage.js';

export type MessagesStreamState =
  | { phase: 'awaiting_start' }
  | { phase: 'streaming'; usage: Usage }
  | { phase: 'stopped'; usage: Usage }
  | { phase: 'failed'; usage: Usage | undefined };

type EventName = StreamEvent['type'];

interface Step {
  state: MessagesStreamState;
  frames: ClientFrame[];
  /** message_start only: the model the upstream named (before it is replaced by the alias). */
  model?: string | undefined;
}

const EVENT_NAMES: ReadonlySet<string> = new Set<EventName>([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

/** Events `step` forwards unchanged while streaming (the content events; the hot path). */
const FORWARDED: ReadonlySet<string> = new Set<EventName>([
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'ping',
]);

const ERROR_TYPES: ReadonlySet<string> = new Set<ErrorType>([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);

export const INITIAL_STATE: MessagesStreamState = { phase: 'awaiting_start' };

export function step(state: MessagesStreamState, event: SseEvent, context: TranslateContext): Step {
  if (state.phase === 'stopped' || state.phase === 'failed') return { state, frames: [] };
  const name = eventName(event);
  if (name === undefined) return { state, frames: [] };
  switch (name) {
    case 'message_start':
      return onMessageStart(state, event.data, context);
    case 'content_block_start':
    case 'content_block_delta':
    case 'content_block_stop':
    case 'ping':
      if (state.phase === 'awaiting_start') {
        if (name === 'ping') return { state, frames: [] };
        throw new UpstreamProtocolError(`${name} before message_start`);
      }
      return { state, frames: [{ event: name, data: event.data }] };
    case 'message_delta':
      return onMessageDelta(state, event.data);
    case 'message_stop':
      if (state.phase === 'awaiting_start')
        throw new UpstreamProtocolError('message_stop before message_start');
      return { state: { phase: 'stopped', usage: state.usage }, frames: [{ event: name, data: event.data }] };
    case 'error':
      return {
        state: { phase: 'failed', usage: state.phase === 'streaming' ? state.usage : undefined },
        frames: [{ event: 'error', data: errorData(event.data) }],
      };
    default:
      return assertNever(name, 'messages stream event');
  }
}

export function finish(state: MessagesStreamState): { frames: ClientFrame[]; complete: boolean } {
  return { frames: [], complete: state.phase === 'stopped' };
}

export function createMessagesStreamTranslator(context: TranslateContext): StreamTranslator {
  let state: MessagesStreamState = INITIAL_STATE;
  let model: string | undefined;
  return {
    push(event) {
      const next = step(state, event, context);
      state = next.state;
      if (next.model !== undefined) model ??= next.model;
      return next.frames;
    },
    end: () => finish(state),
    usage: () => (state.phase === 'awaiting_start' ? undefined : state.usage),
    answeredModel: () => model,
    forwards: (name) => state.phase === 'streaming' && FORWARDED.has(name),
  };
}

/** The SSE event name, or for a data-only frame the JSON `type` (rare; costs a parse). */
function eventName(event: SseEvent): EventName | undefined {
  const name = event.event ?? dataType(event.data);
  return name !== undefined && EVENT_NAMES.has(name) ? (name as EventName) : undefined;
}

function dataType(data: string): string | undefined {
  const parsed = parseJson(data, 'data-only event');
  return isRecord(parsed) && typeof parsed.type === 'string' ? parsed.type : undefined;
}

function onMessageStart(state: MessagesStreamState, data: string, context: TranslateContext): Step {
  if (state.phase !== 'awaiting_start') throw new UpstreamProtocolError('second message_start in one stream');
  const parsed = parseJson(data, 'message_start');
  if (!isRecord(parsed) || !isRecord(parsed.message))
    throw new UpstreamProtocolError('message_start has no message');
  const usage = normaliseUsage(parsed.message.usage);
  // The parsed value is this function's own: rewritten in place, each key keeps its position.
  const model = modelNamed(parsed.message);
  parsed.message.id = context.messageId;
  parsed.message.model = context.responseModel;
  return {
    state: { phase: 'streaming', usage },
    frames: [{ event: 'message_start', data: JSON.stringify(parsed) }],
    model,
  };
}

function onMessageDelta(state: MessagesStreamState, data: string): Step {
  if (state.phase !== 'streaming') throw new UpstreamProtocolError('message_delta before message_start');
  const parsed = parseJson(data, 'message_delta');
  const usage = isRecord(parsed) ? mergeCumulativeUsage(state.usage, parsed.usage) : state.usage;
  return { state: { phase: 'streaming', usage }, frames: [{ event: 'message_delta', data }] };
}

/** A well-formed vendora error goes out unchanged; anything else becomes an api_error keeping the text. */
function errorData(data: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined;
  }
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
  if (error !== undefined && typeof error.type === 'string' && ERROR_TYPES.has(error.type)) {
    if (typeof error.message === 'string') return data;
  }
  const message =
    error !== undefined && typeof error.message === 'string'
      ? error.message
      : `upstream stream error: ${data.slice(0, 500)}`;
  return JSON.stringify({ type: 'error', error: { type: errorType(error?.type), message } });
}

/** Wire error types outside the canonical set, by meaning (timeout_error, conflict_error, ... -> api_error). */
function errorType(upstreamType: unknown): ErrorType {
  if (upstreamType === 'request_too_large' || upstreamType === 'billing_error')
    return 'invalid_request_error';
  return 'api_error';
}

function parseJson(data: string, what: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UpstreamProtocolError(`${what} data is not JSON`);
  }
}
