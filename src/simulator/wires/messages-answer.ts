/**
 * What the simulated messages-wire upstream answers, as pure functions of the request body and the
 * behaviour: the message body, the stream's SSE events, the error envelope and token estimates.
 *
 * Default usage: input = UTF-8 bytes of the request's text / 4 (at least 1; never above the byte
 * count, so the gateway's byte-based worst case always covers it), output = words of the reply
 * (+ a quarter of each tool input's JSON bytes), at least 1 and at most max_tokens. A behaviour's
 * `usage` is reported verbatim.
 */
import { randomBase32 } from '../../lib/ids.js';
import { encodeSseEvent } from '../../primitives/shared/sse.js';
import type { SimBehaviour } from '../types.js';

export const DEFAULT_TEXT = 'Hello from the simulator.';

export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  messages: unknown[];
  system?: unknown;
  tools?: unknown;
  stream?: boolean;
  stop_sequences?: unknown;
}

export interface PlannedTool {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface Answer {
  id: string;
  model: string;
  text: string | undefined;
  tools: PlannedTool[];
  stopReason: NonNullable<SimBehaviour['stopReason']>;
  stopSequence: string | null;
  usage: { input: number; output: number; cacheCreation: number; cacheRead: number };
}

export function newMessageId(): string {
  return `msg_01${randomBase32(22)}`;
}

export function newRequestId(): string {
  return `req_01${randomBase32(22)}`;
}

export function planAnswer(request: MessagesRequestBody, behaviour: SimBehaviour): Answer {
  const tools = (behaviour.toolCalls ?? []).map((call) => ({
    id: call.id ?? `toolu_01${randomBase32(22)}`,
    name: call.name,
    input: call.input,
  }));
  const text = behaviour.text ?? (tools.length > 0 ? undefined : DEFAULT_TEXT);
  const stopReason = behaviour.stopReason ?? (tools.length > 0 ? 'tool_use' : 'end_turn');
  const given = behaviour.usage ?? {};
  return {
    id: newMessageId(),
    model: behaviour.answerModel ?? request.model,
    text,
    tools,
    stopReason,
    stopSequence:
      stopReason === 'stop_sequence' ? (behaviour.stopSequence ?? firstStopSequence(request)) : null,
    usage: {
      input: given.input_tokens ?? estimateInputTokens(request),
      output:
        given.output_tokens ??
        estimateOutputTokens(
          text,
          tools.map((tool) => JSON.stringify(tool.input)),
          Math.max(0, request.max_tokens),
        ),
      cacheCreation: given.cache_creation_input_tokens ?? 0,
      cacheRead: given.cache_read_input_tokens ?? 0,
    },
  };
}

function firstStopSequence(request: MessagesRequestBody): string {
  const sequences = request.stop_sequences;
  return Array.isArray(sequences) && typeof sequences[0] === 'string' ? sequences[0] : '\n\nEND';
}

export function estimateInputTokens(request: Pick<MessagesRequestBody, 'messages' | 'system'>): number {
  let bytes = textBytes(request.system);
  for (const message of request.messages) {
    if (typeof message === 'object' && message !== null)
      bytes += textBytes((message as { content?: unknown }).content);
  }
  return Math.max(1, Math.ceil(bytes / 4));
}

/** UTF-8 bytes of every text a content value carries (strings, text blocks, nested tool results). */
function textBytes(content: unknown): number {
  if (typeof content === 'string') return Buffer.byteLength(content);
  if (!Array.isArray(content)) return 0;
  let bytes = 0;
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const { text, content: nested } = block as { text?: unknown; content?: unknown };
    if (typeof text === 'string') bytes += Buffer.byteLength(text);
    if (nested !== undefined) bytes += textBytes(nested);
  }
  return bytes;
}

/**
 * Default output usage, shared by every simulated wire: the words of the text plus a quarter of
 * each tool call's argument bytes, at least 1 and at most `max` when it is a number.
 */
export function estimateOutputTokens(
  text: string | undefined,
  toolArguments: readonly string[],
  max: unknown,
): number {
  let tokens = text === undefined ? 0 : text.split(/\s+/).filter((word) => word.length > 0).length;
  for (const argumentText of toolArguments) tokens += Math.ceil(Buffer.byteLength(argumentText) / 4);
  const limit = typeof max === 'number' ? max : Number.POSITIVE_INFINITY;
  return Math.min(Math.max(1, tokens), limit);
}

/** count_tokens: a quarter of the JSON bytes of messages, system and tools (at least 1). */
export function countTokens(body: { messages: unknown[]; system?: unknown; tools?: unknown }): number {
  const bytes = Buffer.byteLength(JSON.stringify([body.messages, body.system ?? null, body.tools ?? null]));
  return Math.max(1, Math.ceil(bytes / 4));
}

function usageBody(answer: Answer, outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: answer.usage.input,
    cache_creation_input_tokens: answer.usage.cacheCreation,
    cache_read_input_tokens: answer.usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: answer.usage.cacheCreation, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

export function messageBody(answer: Answer): Record<string, unknown> {
  const content: unknown[] = [];
  if (answer.text !== undefined) content.push({ type: 'text', text: answer.text, citations: null });
  for (const tool of answer.tools) {
    content.push({
      type: 'tool_use',
      id: tool.id,
      name: tool.name,
      input: tool.input,
      caller: { type: 'direct' },
    });
  }
  return {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: answer.stopReason,
    stop_sequence: answer.stopSequence,
    stop_details: null,
    container: null,
    usage: usageBody(answer, answer.usage.output),
  };
}

/** The stream as SSE event texts, in order; `omitFinish` leaves out message_delta and message_stop. */
export function streamEvents(answer: Answer, behaviour: SimBehaviour): string[] {
  const events: string[] = [];
  const push = (type: string, payload: Record<string, unknown>) =>
    events.push(encodeSseEvent(type, JSON.stringify({ type, ...payload })));
  const start = { ...messageBody(answer), content: [], stop_reason: null, stop_sequence: null };
  push('message_start', {
    message: { ...start, usage: usageBody(answer, Math.min(1, answer.usage.output)) },
  });
  push('ping', {});
  let index = 0;
  if (answer.text !== undefined) {
    push('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } });
    for (const piece of split(answer.text, behaviour.deltas ?? 4)) {
      push('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    push('content_block_stop', { index });
    index += 1;
  }
  for (const tool of answer.tools) {
    const block = { type: 'tool_use', id: tool.id, name: tool.name, input: {}, caller: { type: 'direct' } };
    push('content_block_start', { index, content_block: block });
    const json = JSON.stringify(tool.input);
    const sent = behaviour.invalidToolJson === true ? json.slice(0, -1) + ',' : json;
    for (const piece of ['', ...split(sent, 3)]) {
      push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    push('content_block_stop', { index });
    index += 1;
  }
  if (behaviour.omitFinish === true) return events;
  push('message_delta', {
    delta: { stop_reason: answer.stopReason, stop_sequence: answer.stopSequence, stop_details: null },
    // Cumulative totals, as current upstreams send them (never increments).
    usage: {
      input_tokens: answer.usage.input,
      cache_creation_input_tokens: answer.usage.cacheCreation,
      cache_read_input_tokens: answer.usage.cacheRead,
      output_tokens: answer.usage.output,
    },
  });
  push('message_stop', {});
  return events;
}

/** Splits text into at most `pieces` non-empty parts on code-point boundaries. */
export function split(text: string, pieces: number): string[] {
  const points = Array.from(text);
  if (points.length === 0) return [];
  const count = Math.max(1, Math.min(Math.floor(pieces), points.length));
  const size = Math.ceil(points.length / count);
  const parts: string[] = [];
  for (let at = 0; at < points.length; at += size) parts.push(points.slice(at, at + size).join(''));
  return parts;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The upstream's own error envelope for an HTTP status (as the real vendor labels it). */
export function errorBody(
  status: number,
  message: string | undefined,
  requestId: string,
): Record<string, unknown> {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return {
    type: 'error',
    error: { type, message: message ?? `Simulated ${type} (HTTP ${status})` },
    request_id: requestId,
  };
}
