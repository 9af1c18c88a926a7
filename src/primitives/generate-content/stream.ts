/**
 * Generate-content stream (`alt=sse`: data-only events, each a partial GenerateContentResponse)
 * -> canonical stream, as an explicit state machine.
 *
 * `step(state, event, context)` is pure. All answer text goes into one canonical text block
 * (index 0, started on the first non-empty text, one text_delta per chunk), matching the single
 * block of the non-streaming mapping. `usageMetadata` is cumulative, so the latest one wins and is
 * never summed. The chunk carrying `finishReason` (or a prompt-block chunk with no candidates) is
 * terminal: message_delta (stop reason, full usage) + message_stop. A chunk after it may still
 * update usage. An `{error}` chunk -> a canonical `error` event, no message_stop. `end()` is
 * complete only after a terminal chunk or error; a stream that just stops is a truncation.
 */
import type { MessageResponse, StopReason, StreamEvent, Usage } from '../../canonical/types.js';
import {
  frame,
  modelNamed,
  type SseEvent,
  type StreamTranslator,
  type TranslateContext,
  UpstreamProtocolError,
} from '../shared/types.js';
import { streamErrorType } from './error.js';
import { candidateText, canonicalUsage, isRecord, readResponse, stopReasonFor } from './response.js';
import type { WireGenerateContentResponse } from './wire-types.js';

export type GenerateContentStreamEvent =
  | { type: 'chunk'; response: WireGenerateContentResponse }
  | { type: 'error'; error: { code?: unknown; message?: unknown; status?: unknown } };

export type GenerateContentStreamState =
  | { phase: 'awaiting-first-chunk' }
  | { phase: 'streaming'; textOpen: boolean; usage: Usage | undefined }
  | { phase: 'finished'; usage: Usage | undefined }
  | { phase: 'failed'; usage: Usage | undefined };

type Streaming = Extract<GenerateContentStreamState, { phase: 'streaming' }>;

export interface StepResult {
  state: GenerateContentStreamState;
  events: StreamEvent[];
}

export const INITIAL_GENERATE_CONTENT_STREAM_STATE: GenerateContentStreamState = {
  phase: 'awaiting-first-chunk',
};

const TEXT_INDEX = 0;

export function step(
  state: GenerateContentStreamState,
  event: GenerateContentStreamEvent,
  context: TranslateContext,
): StepResult {
  switch (state.phase) {
    case 'awaiting-first-chunk': {
      const usage = event.type === 'chunk' ? canonicalUsage(event.response.usageMetadata) : undefined;
      const start: StreamEvent = { type: 'message_start', message: emptyMessage(context, usage) };
      const next = onEvent({ phase: 'streaming', textOpen: false, usage }, event);
      return { state: next.state, events: [start, ...next.events] };
    }
    case 'streaming':
      return onEvent(state, event);
    case 'finished':
      // Lenient: a chunk after the finish chunk may still bring the final usage.
      if (event.type !== 'chunk') return { state, events: [] };
      return {
        state: { phase: 'finished', usage: canonicalUsage(event.response.usageMetadata) ?? state.usage },
        events: [],
      };
    case 'failed':
      return { state, events: [] };
    default:
      return unreachable(state);
  }
}

function onEvent(state: Streaming, event: GenerateContentStreamEvent): StepResult {
  switch (event.type) {
    case 'chunk':
      return onChunk(state, event.response);
    case 'error':
      return onError(state, event.error);
    default:
      return unreachable(event);
  }
}

function onChunk(state: Streaming, response: WireGenerateContentResponse): StepResult {
  const usage = canonicalUsage(response.usageMetadata) ?? state.usage;
  const candidate = response.candidates?.[0];
  if (candidate === undefined) {
    if (response.promptFeedback?.blockReason === undefined) return { state: { ...state, usage }, events: [] };
    return finish({ ...state, usage }, 'refusal');
  }
  const text = candidateText(candidate);
  const events: StreamEvent[] = [];
  if (text.length > 0 && !state.textOpen) {
    events.push({
      type: 'content_block_start',
      index: TEXT_INDEX,
      content_block: { type: 'text', text: '' },
    });
  }
  if (text.length > 0)
    events.push({ type: 'content_block_delta', index: TEXT_INDEX, delta: { type: 'text_delta', text } });
  const next: Streaming = { phase: 'streaming', textOpen: state.textOpen || text.length > 0, usage };
  if (candidate.finishReason === undefined) return { state: next, events };
  const finished = finish(next, stopReasonFor(candidate.finishReason));
  return { state: finished.state, events: [...events, ...finished.events] };
}

function finish(state: Streaming, stopReason: StopReason): StepResult {
  const events: StreamEvent[] = state.textOpen ? [{ type: 'content_block_stop', index: TEXT_INDEX }] : [];
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: state.usage ?? { output_tokens: 0 },
    },
    { type: 'message_stop' },
  );
  return { state: { phase: 'finished', usage: state.usage }, events };
}

function onError(
  state: Streaming,
  error: { code?: unknown; message?: unknown; status?: unknown },
): StepResult {
  const message =
    typeof error.message === 'string' && error.message.length > 0 ? error.message : 'upstream stream failed';
  return {
    state: { phase: 'failed', usage: state.usage },
    events: [{ type: 'error', error: { type: streamErrorType(error), message } }],
  };
}

function emptyMessage(context: TranslateContext, usage: Usage | undefined): MessageResponse {
  return {
    id: context.messageId,
    type: 'message',
    role: 'assistant',
    content: [],
    model: context.responseModel,
    stop_reason: null,
    stop_sequence: null,
    // Input is known from the first chunk; output so far is reported by message_delta.
    usage: {
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: 0,
      cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
    },
  };
}

export function decodeGenerateContentEvent(event: SseEvent): GenerateContentStreamEvent {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new UpstreamProtocolError('generate-content stream: an event is not valid JSON');
  }
  if (isRecord(data) && isRecord(data.error) && data.candidates === undefined)
    return { type: 'error', error: data.error };
  return { type: 'chunk', response: readResponse(data) };
}

export function createGenerateContentStreamTranslator(context: TranslateContext): StreamTranslator {
  let state: GenerateContentStreamState = INITIAL_GENERATE_CONTENT_STREAM_STATE;
  let model: string | undefined;
  return {
    push(sse: SseEvent) {
      const event = decodeGenerateContentEvent(sse);
      if (model === undefined && event.type === 'chunk') model = modelNamed(event.response, 'modelVersion');
      const result = step(state, event, context);
      state = result.state;
      return result.events.map(frame);
    },
    end() {
      return { frames: [], complete: state.phase === 'finished' || state.phase === 'failed' };
    },
    usage() {
      return state.phase === 'awaiting-first-chunk' ? undefined : state.usage;
    },
    answeredModel: () => model,
  };
}

function unreachable(value: never): never {
  throw new Error(`unhandled stream value ${JSON.stringify(value)}`);
}
