/**
 * The contract every wire primitive implements. A primitive is a set of pure translators
 * (canonical -> wire request, wire response -> canonical, wire stream -> client frames) plus an
 * error mapper. It knows nothing of vendors, governance or storage; the gateway core performs the
 * HTTP call (primitives/shared/upstream-call.ts) and the ledger work around it.
 */
import type {
  ErrorType,
  MessageResponse,
  MessagesRequest,
  StreamEvent,
  Usage,
} from '../../canonical/types.js';

/** One parsed upstream server-sent event. `event` is absent for data-only frames. */
export interface SseEvent {
  event?: string | undefined;
  data: string;
}

/** One server-sent event ready for the client: a canonical event name and its JSON text. */
export interface ClientFrame {
  event: StreamEvent['type'];
  data: string;
}

/** Where and what to send upstream. `path` is appended to the connection's base URL. */
export interface WireRequest {
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

/** Per-call facts a translator needs. Ids and names are injected so translators stay pure. */
export interface TranslateContext {
  /** The model identifier the upstream expects (from the alias target). */
  upstreamModel: string;
  /** The model name reported back to the client (the alias it asked for). */
  responseModel: string;
  /** The `msg_` id of the canonical response. */
  messageId: string;
}

/** An upstream error translated into the vendora dialect, with whether fallback may retry it. */
export interface UpstreamErrorInfo {
  status: number;
  type: ErrorType;
  message: string;
  retryable: boolean;
  /** retry-after value kept from the upstream, in seconds, when it sent one. */
  retryAfter?: string;
}

/** Thrown by a translator when the upstream sent something that cannot be translated. */
export class UpstreamProtocolError extends Error {
  override readonly name = 'UpstreamProtocolError';
}

/**
 * Streams are explicit state machines wrapped in this small object: feed each upstream event with
 * `push`, then call `end` when the upstream closes. `end().complete` is false when the upstream
 * closed without the wire's terminal marker (the core then emits an SSE `error`, never a clean stop).
 */
export interface StreamTranslator {
  push(event: SseEvent): ClientFrame[];
  end(): { frames: ClientFrame[]; complete: boolean };
  /** Cumulative usage seen so far, or undefined when the upstream reported none yet. */
  usage(): Usage | undefined;
  /**
   * The model the upstream's stream says answered (its first event that names one: message_start,
   * the first chunk, response.created, modelVersion), or undefined while none did. Observability
   * only (gen_ai.response.model); the client still reads the alias.
   */
  answeredModel(): string | undefined;
  /**
   * Optional (a translator whose wire is the client's): whether an event of this name, in the
   * current state, would go out as exactly one frame with the same name and data and change
   * nothing. The core then forwards its bytes without decoding it or calling `push`.
   */
  forwards?(name: string): boolean;
  /**
   * Optional: `push` as the canonical events themselves, for a face that renders them in its own
   * wire (/v1/chat/completions): the events whose serialisations `push` would return, in order.
   */
  pushEvents?(event: SseEvent): StreamEvent[];
  /** Optional, with `pushEvents`: `end` as canonical events. */
  endEvents?(): { events: StreamEvent[]; complete: boolean };
}

export interface Primitive<Options> {
  readonly name: PrimitiveName;
  buildRequest(request: MessagesRequest, context: TranslateContext, options: Options): WireRequest;
  parseResponse(body: unknown, context: TranslateContext, options: Options): MessageResponse;
  /** The model a 2xx answer's body says answered (`model`, or `modelVersion`), when it names one. */
  answeredModel(body: unknown): string | undefined;
  createStreamTranslator(context: TranslateContext, options: Options): StreamTranslator;
  mapError(
    status: number,
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
  ): UpstreamErrorInfo;
}

export type PrimitiveName = 'messages' | 'chat-completions' | 'responses' | 'generate-content' | 'converse';

/** Serialise a canonical stream event for the client. */
export function frame(event: StreamEvent): ClientFrame {
  return { event: event.type, data: JSON.stringify(event) };
}

/** `value[field]` when `value` is an object whose `field` is a non-empty string (an answer's model name). */
export function modelNamed(value: unknown, field: 'model' | 'modelVersion' = 'model'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const name = (value as Record<string, unknown>)[field];
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}
