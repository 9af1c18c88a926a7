/**
 * GenerateContentResponse -> canonical message, plus the finish-reason and usage rules the stream
 * translator shares.
 *
 * Content: the non-thought text parts of `candidates[0]` concatenated into one text block (none
 * when there is no text). Thought-summary parts (`thought: true`) are skipped: we never ask for
 * them. Any other data part (functionCall, inlineData, executableCode, ...) raises
 * UpstreamProtocolError: the text primitive sends no tools and asks for text only, so such a part
 * cannot be translated and must not be dropped silently. A prompt blocked before generation (no
 * candidates, `promptFeedback.blockReason`) is a refusal with empty content.
 */
import type { MessageResponse, ResponseContentBlock, StopReason, Usage } from '../../canonical/types.js';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import type { WireCandidate, WireGenerateContentResponse, WirePart } from './wire-types.js';

export function parseGenerateContentResponse(body: unknown, context: TranslateContext): MessageResponse {
  const response = readResponse(body);
  const candidate = response.candidates?.[0];
  if (candidate === undefined && response.promptFeedback?.blockReason === undefined) {
    throw new UpstreamProtocolError('generate-content: the response has no candidates and no block reason');
  }
  const usage = canonicalUsage(response.usageMetadata);
  if (usage === undefined)
    throw new UpstreamProtocolError('generate-content: the response carries no usageMetadata');
  const text = candidate === undefined ? '' : candidateText(candidate);
  const content: ResponseContentBlock[] = text.length > 0 ? [{ type: 'text', text }] : [];
  return {
    id: context.messageId,
    type: 'message',
    role: 'assistant',
    content,
    model: context.responseModel,
    stop_reason: candidate === undefined ? 'refusal' : stopReasonFor(candidate.finishReason ?? 'STOP'),
    stop_sequence: null,
    usage,
  };
}

export function readResponse(body: unknown): WireGenerateContentResponse {
  if (!isRecord(body))
    throw new UpstreamProtocolError('generate-content: the response body is not a JSON object');
  if (body.candidates !== undefined && !Array.isArray(body.candidates)) {
    throw new UpstreamProtocolError('generate-content: candidates is not an array');
  }
  return body as WireGenerateContentResponse;
}

const DATA_MEMBERS = [
  'functionCall',
  'functionResponse',
  'inlineData',
  'fileData',
  'executableCode',
  'codeExecutionResult',
  'toolCall',
  'toolResponse',
] as const;

/** The answer text of one candidate (or chunk of a candidate): its non-thought text parts, joined. */
export function candidateText(candidate: WireCandidate): string {
  const parts = candidate.content?.parts ?? [];
  if (!Array.isArray(parts))
    throw new UpstreamProtocolError('generate-content: content.parts is not an array');
  return parts.map(partText).join('');
}

function partText(part: WirePart): string {
  if (!isRecord(part)) throw new UpstreamProtocolError('generate-content: a part is not an object');
  const member = DATA_MEMBERS.find((name) => part[name] !== undefined);
  if (member !== undefined)
    throw new UpstreamProtocolError(`generate-content: a ${member} part cannot be translated`);
  if (part.thought === true || typeof part.text !== 'string') return '';
  return part.text;
}

/**
 * finishReason -> stop_reason. STOP covers both a natural end and a matched stop sequence (the
 * wire does not say which, nor which sequence), so it maps to end_turn with stop_sequence null.
 * The tool-call reasons cannot arise (no tools are sent) and read as end_turn, like the
 * non-safety reasons without a closer equivalent. Unknown values read as end_turn.
 */
const FINISH_REASONS = {
  STOP: 'end_turn',
  MAX_TOKENS: 'max_tokens',
  CONTINUATION: 'max_tokens',
  SAFETY: 'refusal',
  RECITATION: 'refusal',
  BLOCKLIST: 'refusal',
  PROHIBITED_CONTENT: 'refusal',
  SPII: 'refusal',
  IMAGE_SAFETY: 'refusal',
  IMAGE_PROHIBITED_CONTENT: 'refusal',
  IMAGE_RECITATION: 'refusal',
  LANGUAGE: 'end_turn',
  OTHER: 'end_turn',
  FINISH_REASON_UNSPECIFIED: 'end_turn',
  MALFORMED_FUNCTION_CALL: 'end_turn',
  UNEXPECTED_TOOL_CALL: 'end_turn',
  TOO_MANY_TOOL_CALLS: 'end_turn',
  NO_IMAGE: 'end_turn',
  IMAGE_OTHER: 'end_turn',
} as const satisfies Record<string, StopReason>;

export function stopReasonFor(finishReason: string): StopReason {
  return Object.hasOwn(FINISH_REASONS, finishReason)
    ? FINISH_REASONS[finishReason as keyof typeof FINISH_REASONS]
    : 'end_turn';
}

/**
 * input = promptTokenCount + toolUsePromptTokenCount - cachedContentTokenCount (the prompt count
 * includes the cached part); cache_read = cachedContentTokenCount; output = candidatesTokenCount +
 * thoughtsTokenCount (thinking is billed as output). Explicit caches are created by a separate
 * API, so cache_creation is 0. Missing counts are 0 (proto3); undefined when there is no usage.
 */
export function canonicalUsage(metadata: unknown): Usage | undefined {
  if (!isRecord(metadata)) return undefined;
  const prompt = tokenCount(metadata.promptTokenCount, 'promptTokenCount');
  const toolUse = tokenCount(metadata.toolUsePromptTokenCount, 'toolUsePromptTokenCount');
  const cached = tokenCount(metadata.cachedContentTokenCount, 'cachedContentTokenCount');
  if (cached > prompt)
    throw new UpstreamProtocolError('generate-content: cachedContentTokenCount exceeds promptTokenCount');
  return {
    input_tokens: prompt + toolUse - cached,
    output_tokens:
      tokenCount(metadata.candidatesTokenCount, 'candidatesTokenCount') +
      tokenCount(metadata.thoughtsTokenCount, 'thoughtsTokenCount'),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

function tokenCount(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new UpstreamProtocolError(`generate-content: usageMetadata.${field} is not a non-negative integer`);
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
