/**
 * Responses wire Response object -> canonical message. Also the stop-reason and usage rules the
 * stream translator shares, so both paths agree.
 *
 * Content walks `output[]` in order: each `output_text` (and `refusal`) part of a `message` item
 * becomes one text block, each `function_call` item one tool_use block (id = call_id, never the
 * item id). Reasoning items and any other item type are ignored: we never ask for reasoning
 * summaries and never offer built-in tools. A `failed` (or unfinished) response is not a message:
 * it raises UpstreamProtocolError naming the upstream's error code.
 */
import type { MessageResponse, ResponseContentBlock, StopReason, Usage } from '../../canonical/types.js';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import type { WireContentPart, WireOutputItem, WireResponse } from './wire-types.js';

export function parseResponsesResponse(body: unknown, context: TranslateContext): MessageResponse {
  const response = readResponse(body);
  assertFinished(response);
  const content: ResponseContentBlock[] = [];
  let hasRefusal = false;
  for (const item of response.output ?? []) {
    for (const block of itemBlocks(item)) {
      if (block.refusal) hasRefusal = true;
      content.push(block.block);
    }
  }
  const hasToolUse = content.some((block) => block.type === 'tool_use');
  const usage = canonicalUsage(response.usage);
  if (usage === undefined)
    throw new UpstreamProtocolError('responses: the response carries no usage, its cost cannot be known');
  return {
    id: context.messageId,
    type: 'message',
    role: 'assistant',
    content,
    model: context.responseModel,
    stop_reason: stopReasonOf({ response, hasToolUse, hasRefusal }),
    stop_sequence: null,
    usage,
  };
}

export function readResponse(body: unknown): WireResponse {
  if (!isRecord(body)) throw new UpstreamProtocolError('responses: the response body is not a JSON object');
  if (body.output !== undefined && body.output !== null && !Array.isArray(body.output)) {
    throw new UpstreamProtocolError('responses: output is not an array');
  }
  return body as WireResponse;
}

function assertFinished(response: WireResponse): void {
  const status = response.status ?? 'completed';
  if (status === 'completed' || status === 'incomplete') return;
  if (status === 'failed') {
    const error = response.error ?? {};
    throw new UpstreamProtocolError(
      `responses: upstream response failed: ${error.code ?? 'unknown'}: ${error.message ?? ''}`,
    );
  }
  throw new UpstreamProtocolError(`responses: unexpected response status ${status}`);
}

interface MappedBlock {
  block: ResponseContentBlock;
  refusal: boolean;
}

function itemBlocks(item: WireOutputItem): MappedBlock[] {
  if (!isRecord(item)) throw new UpstreamProtocolError('responses: an output item is not an object');
  if (item.type === 'message') return (Array.isArray(item.content) ? item.content : []).flatMap(partBlock);
  if (item.type === 'function_call') {
    const { call_id: callId, name, arguments: args } = item as Record<string, unknown>;
    if (typeof callId !== 'string' || typeof name !== 'string') {
      throw new UpstreamProtocolError('responses: a function_call item lacks call_id or name');
    }
    return [
      { block: { type: 'tool_use', id: callId, name, input: parseArguments(args, name) }, refusal: false },
    ];
  }
  return [];
}

function partBlock(part: WireContentPart): MappedBlock[] {
  if (!isRecord(part)) return [];
  if (part.type === 'output_text' && typeof part.text === 'string') {
    return [{ block: { type: 'text', text: part.text }, refusal: false }];
  }
  if (part.type === 'refusal' && typeof part.refusal === 'string') {
    return [{ block: { type: 'text', text: part.refusal }, refusal: true }];
  }
  return [];
}

/** Function-call arguments (a JSON text) -> tool_use input. Empty text means no arguments. */
export function parseArguments(args: unknown, name: string): Record<string, unknown> {
  if (args === undefined || args === null || args === '') return {};
  if (typeof args !== 'string')
    throw new UpstreamProtocolError(`responses: arguments of ${name} are not a string`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new UpstreamProtocolError(`responses: arguments of ${name} are not valid JSON`);
  }
  if (!isRecord(parsed))
    throw new UpstreamProtocolError(`responses: arguments of ${name} are not a JSON object`);
  return parsed;
}

export interface StopFacts {
  response: WireResponse;
  hasToolUse: boolean;
  hasRefusal: boolean;
}

/**
 * incomplete + max_output_tokens -> max_tokens; incomplete + content_filter -> refusal; a refusal
 * part -> refusal; any function call -> tool_use; otherwise (other incomplete reasons included)
 * end_turn. The wire has no stop sequences, so stop_sequence is never reported.
 */
export function stopReasonOf({ response, hasToolUse, hasRefusal }: StopFacts): StopReason {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    if (reason === 'max_output_tokens') return 'max_tokens';
    if (reason === 'content_filter') return 'refusal';
  }
  if (hasRefusal) return 'refusal';
  return hasToolUse ? 'tool_use' : 'end_turn';
}

/**
 * The wire's input_tokens include the cached and cache-written subsets; canonical input does not.
 * output_tokens already include reasoning tokens (billed as output). Undefined when absent.
 */
export function canonicalUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const input = tokenCount(usage.input_tokens, 'input_tokens');
  const cacheRead = tokenCount(details.cached_tokens, 'cached_tokens');
  const cacheWrite = tokenCount(details.cache_write_tokens, 'cache_write_tokens');
  if (cacheRead + cacheWrite > input) {
    throw new UpstreamProtocolError('responses: cached input tokens exceed input_tokens');
  }
  return {
    input_tokens: input - cacheRead - cacheWrite,
    output_tokens: tokenCount(usage.output_tokens, 'output_tokens'),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

function tokenCount(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new UpstreamProtocolError(`responses: usage.${field} is not a non-negative integer`);
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
