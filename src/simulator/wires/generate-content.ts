/**
 * The generate-content wire (developer API v1beta), simulated:
 * POST {prefix}/v1beta/models/{model}:generateContent and :streamGenerateContent (SSE with
 * `alt=sse`; without it, one JSON array written incrementally, as the real service does).
 *
 * Faithful points: GenerateContentResponse with one candidate (`content.role` model, `index` 0,
 * finishReason), `usageMetadata` (promptTokenCount includes cachedContentTokenCount;
 * candidatesTokenCount excludes thoughtsTokenCount; zero counts omitted as proto3 JSON does),
 * `modelVersion` and `responseId`; SSE events are data-only, CRLF-terminated, no [DONE]; each chunk
 * carries only new text and cumulative usage; function calls arrive whole; the last chunk carries
 * finishReason with an empty text part. The service's own 400s for empty contents or parts and for
 * thinkingBudget together with thinkingLevel; errors as `{error: {code, message, status}}` with a
 * RetryInfo detail on 429 when a retry-after is set. Stop reasons: max_tokens -> MAX_TOKENS,
 * refusal -> SAFETY, everything else -> STOP (the wire does not tell stop sequences apart).
 * Default usage: input = UTF-8 bytes of the request's text / 4 (at least 1), output = words of the
 * text, at least 1 and at most maxOutputTokens; `usage.thinking_tokens` -> thoughtsTokenCount.
 * `invalidToolJson` does not apply: functionCall args are a JSON object on this wire.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http-io.js';
import { writeEventStream } from '../stream-writer.js';
import type { SimBehaviour, SimCall, SimWire } from '../types.js';
import { type CallFailure, callFailure } from './call-failure.js';
import { DEFAULT_TEXT, estimateOutputTokens, split } from './messages-answer.js';

export const generateContentWire: SimWire = {
  name: 'generate-content',
  routes: [
    {
      method: 'POST',
      pattern: /^(?<prefix>.*)\/v1beta\/models\/(?<model>[^/:]+):generateContent$/,
      handle: generate,
    },
    {
      method: 'POST',
      pattern: /^(?<prefix>.*)\/v1beta\/models\/(?<model>[^/:]+):streamGenerateContent$/,
      handle: generate,
    },
  ],
  modelOf: (call) => call.params.model,
};

type Body = Record<string, unknown>;

interface Answer {
  model: string;
  responseId: string;
  text: string | undefined;
  calls: Array<{ id?: string | undefined; name: string; args: Record<string, unknown> }>;
  finishReason: 'STOP' | 'MAX_TOKENS' | 'SAFETY';
  usage: { prompt: number; cached: number; candidates: number; thoughts: number };
}

async function generate(call: SimCall): Promise<void> {
  const failure = callFailure(call, validate(call.body));
  if (failure !== undefined) return sendError(call.response, failure);
  const answer = planAnswer(call.body as Body, call.params.model ?? 'unknown', call.behaviour);
  if (!call.path.endsWith(':streamGenerateContent'))
    return sendJson(call.response, 200, finalChunk(answer, true));
  const sse = call.query.get('alt') === 'sse';
  await writeEventStream(call.response, streamChunks(answer, call.behaviour, sse), call.behaviour, {
    'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8',
    'cache-control': 'no-cache',
  });
}

function validate(body: unknown): string | undefined {
  if (!isRecord(body)) return 'Invalid JSON payload received.';
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return '* GenerateContentRequest.contents: contents is not specified';
  for (const [index, content] of body.contents.entries()) {
    const parts = isRecord(content) ? content.parts : undefined;
    if (!Array.isArray(parts) || parts.length === 0)
      return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`;
    if (
      parts.some(
        (part) =>
          !isRecord(part) ||
          Object.keys(part).every((key) => key === 'thought' || key === 'thoughtSignature'),
      )
    ) {
      return `* GenerateContentRequest.contents[${index}].parts: required oneof field 'data' must have one initialized field`;
    }
  }
  const thinking = isRecord(body.generationConfig) ? body.generationConfig.thinkingConfig : undefined;
  if (isRecord(thinking) && thinking.thinkingBudget !== undefined && thinking.thinkingLevel !== undefined) {
    return 'You can only set only one of thinking budget and thinking level.';
  }
  return undefined;
}

function planAnswer(body: Body, model: string, behaviour: SimBehaviour): Answer {
  const calls = (behaviour.toolCalls ?? []).map((tool) => ({
    id: tool.id,
    name: tool.name,
    args: tool.input,
  }));
  const text = behaviour.text ?? (calls.length > 0 ? undefined : DEFAULT_TEXT);
  const finishReason =
    behaviour.stopReason === 'max_tokens'
      ? 'MAX_TOKENS'
      : behaviour.stopReason === 'refusal'
        ? 'SAFETY'
        : 'STOP';
  const given = behaviour.usage ?? {};
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const cached = given.cache_read_input_tokens ?? 0;
  return {
    model: behaviour.answerModel ?? model,
    responseId: randomBytes(16).toString('base64url').slice(0, 22),
    text,
    calls,
    finishReason,
    usage: {
      prompt:
        (given.input_tokens ??
          Math.max(1, Math.ceil(textBytes([body.systemInstruction, body.contents]) / 4))) + cached,
      cached,
      candidates: given.output_tokens ?? estimateOutputTokens(text, [], config.maxOutputTokens),
      thoughts: given.thinking_tokens ?? 0,
    },
  };
}

/** UTF-8 bytes of the text parts of the system instruction and contents (never inline data). */
function textBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textBytes(item), 0);
  if (!isRecord(value)) return 0;
  return textBytes(value.text) + textBytes(value.parts);
}

/** Proto3 JSON: zero counts are omitted. `candidates` is the share of output reported so far. */
function usageMetadata(usage: Answer['usage'], candidates: number): Body {
  const metadata: Body = { promptTokenCount: usage.prompt };
  if (candidates > 0) metadata.candidatesTokenCount = candidates;
  if (usage.cached > 0) metadata.cachedContentTokenCount = usage.cached;
  metadata.totalTokenCount = usage.prompt + candidates + usage.thoughts;
  metadata.promptTokensDetails = [{ modality: 'TEXT', tokenCount: usage.prompt }];
  if (usage.cached > 0) metadata.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: usage.cached }];
  if (usage.thoughts > 0) metadata.thoughtsTokenCount = usage.thoughts;
  return metadata;
}

function chunk(answer: Answer, parts: Body[], candidates: number, finish: boolean): Body {
  const candidate: Body = { content: parts.length > 0 ? { parts, role: 'model' } : { role: 'model' } };
  if (finish) candidate.finishReason = answer.finishReason;
  candidate.index = 0;
  return {
    candidates: [candidate],
    usageMetadata: usageMetadata(answer.usage, candidates),
    modelVersion: answer.model,
    responseId: answer.responseId,
  };
}

function callParts(answer: Answer): Body[] {
  return answer.calls.map((call) => ({
    functionCall:
      call.id === undefined
        ? { name: call.name, args: call.args }
        : { id: call.id, name: call.name, args: call.args },
  }));
}

/** The non-streaming body (whole) or the stream's last chunk (an empty text part and the finish). */
function finalChunk(answer: Answer, whole: boolean): Body {
  const parts = whole
    ? [
        ...(answer.text === undefined || answer.text === '' ? [] : [{ text: answer.text }]),
        ...callParts(answer),
      ]
    : [{ text: '' }];
  return chunk(answer, parts, answer.usage.candidates, true);
}

/** The stream's chunks in order; `omitFinish` leaves out the finish chunk. */
function streamChunks(answer: Answer, behaviour: SimBehaviour, sse: boolean): string[] {
  const bodies: Body[] = [];
  const pieces = answer.text === undefined ? [] : split(answer.text, behaviour.deltas ?? 4);
  for (const [index, piece] of pieces.entries()) {
    const reported = Math.floor((answer.usage.candidates * (index + 1)) / (pieces.length + 1));
    bodies.push(chunk(answer, [{ text: piece }], reported, false));
  }
  if (answer.calls.length > 0) bodies.push(chunk(answer, callParts(answer), answer.usage.candidates, false));
  if (behaviour.omitFinish !== true) bodies.push(finalChunk(answer, false));
  if (sse) return bodies.map((body) => `data: ${JSON.stringify(body)}\r\n\r\n`);
  // Without alt=sse: one JSON array, written element by element.
  return bodies.map(
    (body, index) =>
      `${index === 0 ? '[' : ',\r\n'}${JSON.stringify(body)}${index === bodies.length - 1 ? ']' : ''}`,
  );
}

const RPC_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function sendError(response: ServerResponse, failure: CallFailure): void {
  const { status, message, retryAfter } = failure;
  const rpcStatus = RPC_STATUSES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
  const error: Body = {
    code: status,
    message: message ?? `Simulated ${rpcStatus} (HTTP ${status})`,
    status: rpcStatus,
  };
  const headers: Record<string, string> = {};
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  if (status === 429 && retryAfter !== undefined) {
    error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` }];
  }
  sendJson(response, status, { error }, headers);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
