/**
 * Messages-wire response -> canonical message (portable mode), and the native pass-through.
 *
 * Portable: lenient validation (type 'message' when present, a content array), the gateway's own
 * `msg_` id and the alias as model (ids and names stay consistent across primitives), usage
 * normalised to the four counters, and only the canonical fields of each block kept. A block type
 * or stop reason the canonical model has no name for is a protocol error rather than a silent drop.
 * Native: every upstream field kept, only `model` replaced.
 */
import type { MessageResponse, ResponseContentBlock, StopReason } from '../../canonical/types.js';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import { isRecord, normaliseUsage } from './usage.js';

const STOP_REASONS: ReadonlySet<string> = new Set<StopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

export function parseMessagesResponse(body: unknown, context: TranslateContext): MessageResponse {
  if (!isRecord(body)) throw new UpstreamProtocolError('messages response is not a JSON object');
  if (body.type !== undefined && body.type !== 'message') {
    throw new UpstreamProtocolError(
      `messages response has type ${JSON.stringify(body.type)}, expected "message"`,
    );
  }
  if (!Array.isArray(body.content)) throw new UpstreamProtocolError('messages response has no content array');
  return {
    id: context.messageId,
    type: 'message',
    role: 'assistant',
    content: body.content.map((block, index) => contentBlock(block, index)),
    model: context.responseModel,
    stop_reason: stopReason(body.stop_reason),
    stop_sequence: typeof body.stop_sequence === 'string' ? body.stop_sequence : null,
    usage: normaliseUsage(body.usage),
  };
}

/** Native mode: the upstream body as it came, with only `model` replaced. */
export function passthroughResponse(body: unknown, context: TranslateContext): Record<string, unknown> {
  if (!isRecord(body)) throw new UpstreamProtocolError('messages response is not a JSON object');
  return { ...body, model: context.responseModel };
}

/** POST /v1/messages/count_tokens answer. */
export function parseCountTokensResponse(body: unknown): { input_tokens: number } {
  const value = isRecord(body) ? body.input_tokens : undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new UpstreamProtocolError('count_tokens response has no integer input_tokens');
  }
  return { input_tokens: value };
}

export function stopReason(value: unknown): StopReason | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && STOP_REASONS.has(value)) return value as StopReason;
  throw new UpstreamProtocolError(`unknown stop_reason ${JSON.stringify(value)}`);
}

function contentBlock(block: unknown, index: number): ResponseContentBlock {
  if (!isRecord(block) || typeof block.type !== 'string') {
    throw new UpstreamProtocolError(`content[${index}] is not a content block`);
  }
  const type = block.type;
  if (type === 'text') {
    const text = requireString(block.text, index, 'text');
    return Array.isArray(block.citations) ? { type, text, citations: block.citations } : { type, text };
  }
  if (type === 'tool_use') {
    if (!isRecord(block.input)) throw new UpstreamProtocolError(`content[${index}].input is not an object`);
    return {
      type,
      id: requireString(block.id, index, 'id'),
      name: requireString(block.name, index, 'name'),
      input: block.input,
    };
  }
  if (type === 'thinking') {
    return {
      type,
      thinking: requireString(block.thinking, index, 'thinking'),
      signature: requireString(block.signature, index, 'signature'),
    };
  }
  if (type === 'redacted_thinking') return { type, data: requireString(block.data, index, 'data') };
  throw new UpstreamProtocolError(
    `content[${index}] has block type ${JSON.stringify(type)} the gateway cannot carry`,
  );
}

function requireString(value: unknown, index: number, field: string): string {
  if (typeof value !== 'string')
    throw new UpstreamProtocolError(`content[${index}].${field} is not a string`);
  return value;
}
