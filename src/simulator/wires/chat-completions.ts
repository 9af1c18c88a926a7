/**
 * The chat-completions wire (vendorb and compatible vendors), simulated: POST {prefix}/chat/completions,
 * JSON or SSE. Any prefix is accepted, so base URLs such as /v1 or /openai/v1 work.
 *
 * Faithful points: `chat.completion` / `chat.completion.chunk` objects (`chatcmpl-` id, unix-second
 * `created`, `system_fingerprint`, `choices[0]` with `message` or `delta`, `finish_reason`); usage
 * whose `prompt_tokens` include `prompt_tokens_details.cached_tokens` (and `cache_write_tokens`);
 * data-only SSE frames ending in `data: [DONE]`; the usage chunk (`choices: []`) only when the
 * request asked for `stream_options.include_usage`, with `usage: null` on every other chunk; tool
 * calls as a header delta (id, name, empty arguments) then argument fragments, several calls
 * interleaved by `index`; errors as `{error: {message, type, param, code}}`.
 * Stop reasons: end_turn and stop_sequence -> stop (the wire never says which sequence matched),
 * max_tokens -> length, tool_use -> tool_calls, refusal -> content_filter.
 * Default usage: input = UTF-8 bytes of the messages' text / 4 (at least 1), output = words of the
 * text (+ a quarter of each tool call's argument bytes), at least 1 and at most the token limit.
 * `latencyMs` and `dropBeforeResponse` are applied by the server before the handler runs.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http-io.js';
import { EVENT_STREAM_HEADERS, writeEventStream } from '../stream-writer.js';
import type { SimCall, SimWire } from '../types.js';
import { type CallFailure, callFailure } from './call-failure.js';
import { completionBody, planAnswer, streamFrames } from './chat-completions-answer.js';

export const chatCompletionsWire: SimWire = {
  name: 'chat-completions',
  routes: [{ method: 'POST', pattern: /^(?<prefix>.*)\/chat\/completions$/, handle: createCompletion }],
  modelOf(call) {
    const model = isRecord(call.body) ? call.body.model : undefined;
    return typeof model === 'string' ? model : undefined;
  },
};

type Body = Record<string, unknown>;

async function createCompletion(call: SimCall): Promise<void> {
  const requestId = `req_${hex(32)}`;
  const failure = callFailure(call, validate(call.body));
  if (failure !== undefined) return sendError(call.response, failure, requestId);
  const body = call.body as Body;
  const answer = planAnswer(body, call.behaviour);
  if (body.stream !== true)
    return sendJson(call.response, 200, completionBody(answer), { 'x-request-id': requestId });
  await writeEventStream(call.response, streamFrames(body, answer, call.behaviour), call.behaviour, {
    ...EVENT_STREAM_HEADERS,
    'x-request-id': requestId,
  });
}

/** The upstream's own 400s (texts in the style of the real wire). */
function validate(body: unknown): string | undefined {
  if (!isRecord(body)) return 'We could not parse the JSON body of your request.';
  if (typeof body.model !== 'string' || body.model.length === 0)
    return "Missing required parameter: 'model'.";
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "Missing required parameter: 'messages'.";
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const value = body[field];
    if (
      value !== undefined &&
      value !== null &&
      (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    ) {
      return `Invalid '${field}': expected a positive integer.`;
    }
  }
  if (body.parallel_tool_calls !== undefined && !(Array.isArray(body.tools) && body.tools.length > 0)) {
    return "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.";
  }
  return undefined;
}

const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'permission_error', code: null, message: 'You are not allowed to use this model.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' },
  500: {
    type: 'server_error',
    code: null,
    message: 'The server had an error while processing your request.',
  },
  503: { type: 'service_unavailable_error', code: null, message: 'The engine is currently overloaded.' },
};

function sendError(response: ServerResponse, failure: CallFailure, requestId: string): void {
  const { status, message, retryAfter } = failure;
  const known = ERRORS[status] ?? (status >= 500 ? ERRORS[500] : ERRORS[400]);
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  const error = {
    message: message ?? known?.message ?? 'Error.',
    type: known?.type ?? 'invalid_request_error',
    param: null,
    code: known?.code ?? null,
  };
  sendJson(response, status, { error }, headers);
}

function hex(length: number): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}

function isRecord(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
