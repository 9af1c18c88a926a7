/**
 * Simulated upstreams: one HTTP server on loopback that speaks every wire primitive faithfully
 * (one module per wire under src/simulator/wires/), records what it received, and can be told to
 * delay, fail, drop or stall a stream, or report given usage. Used by tests, benchmarks and the
 * quick start. Never part of the gateway's request path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the next matching call should do. Every field is optional; defaults give a short answer. */
export interface SimBehaviour {
  /** Delay before the response headers are sent (ms). */
  latencyMs?: number;
  /** Delay between stream events (ms). */
  eventDelayMs?: number;
  /** Answer with this HTTP status and the wire's own error body. */
  status?: number;
  errorMessage?: string;
  /** Sent as the `retry-after` header with an error status. */
  retryAfter?: string;
  /** Streaming: destroy the socket after this many events were written. */
  dropAfterEvents?: number;
  /** Streaming: stop writing after this many events and keep the socket open. */
  stallAfterEvents?: number;
  /** Non-streaming: destroy the socket before any response byte. */
  dropBeforeResponse?: boolean;
  /** Usage to report, in canonical terms; each wire maps it to its own fields. */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
    /** generate-content only: thoughtsTokenCount. */
    thinking_tokens?: number;
  };
  /** Assistant text. Default: "Hello from the simulator." */
  text?: string;
  /** Number of text deltas the text is split into when streaming (default 4). */
  deltas?: number;
  /** Answer with these tool calls (after the text, if text is also given). */
  toolCalls?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  /** Wire-neutral stop reason; each wire maps it to its own finish reason. */
  stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';
  /** With stopReason stop_sequence: which sequence matched. */
  stopSequence?: string;
  /** Send tool-call arguments that are not valid JSON. */
  invalidToolJson?: boolean;
  /** Streaming: end the stream without the wire's terminal marker/finish reason. */
  omitFinish?: boolean;
  /** The model the answer names (default: the model the request named); real upstreams often answer a dated version. */
  answerModel?: string;
  /** Batches (set at creation): status reads that still report the batch running before it ends (default 1). */
  batchPolls?: number;
}

export interface RecordedRequest {
  wire: string;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or the raw text when it is not JSON (multipart bodies are kept as byte length). */
  body: unknown;
  at: number;
  /**
   * Set when the connection closed before the response was complete: the client went away (a
   * gateway aborting its upstream call) or a drop behaviour destroyed the socket.
   */
  closedEarlyAt?: number;
}

/** What a wire module gets for one request. */
export interface SimCall {
  request: IncomingMessage;
  response: ServerResponse;
  path: string;
  query: URLSearchParams;
  /** Parsed JSON body (undefined for GET or an empty body). */
  body: unknown;
  /** Raw request body bytes. */
  rawBody: Buffer;
  /** Path parameters captured by the route pattern's named groups. */
  params: Record<string, string>;
  behaviour: SimBehaviour;
}

export interface SimRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Matched against the path without query string; named groups become `params`. */
  pattern: RegExp;
  handle(call: SimCall, state: SimWireState): Promise<void> | void;
}

/** Per-wire mutable state a module may keep (files, batches, background responses, ...). */
export type SimWireState = Map<string, unknown>;

export interface SimWire {
  name: string;
  routes: SimRoute[];
  /** Model name a request is about, to pick a per-model behaviour (may return undefined). */
  modelOf?(call: Omit<SimCall, 'behaviour'>): string | undefined;
}
