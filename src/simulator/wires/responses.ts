/**
 * The responses wire (vendorb), simulated: POST {prefix}/responses, JSON or SSE (stateless use;
 * background mode is not simulated yet). Any prefix is accepted, so a base URL ending in /v1 works.
 *
 * Faithful points: a full Response object (`resp_` id, status, incomplete_details, echo of the
 * request parameters, output items `message` and `function_call`, usage whose input_tokens include
 * the cached subset); named SSE events with a `sequence_number` from 0, lifecycle events carrying
 * the full response, added -> deltas -> done per item, a terminal response.completed or
 * response.incomplete and no [DONE]; errors as `{error: {message, type, param, code}}`.
 * Stop reasons: max_tokens -> incomplete (max_output_tokens), refusal -> incomplete
 * (content_filter); the wire has no stop sequences, so stop_sequence reads as completed.
 * Default usage: input = UTF-8 bytes of the request's text / 4 (at least 1), output = words of the
 * text (+ a quarter of each tool call's argument bytes), at least 1 and at most max_output_tokens.
 */

import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { encodeSseEvent } from '../../primitives/shared/sse.js';
import { sendJson } from '../http-io.js';
import { EVENT_STREAM_HEADERS, writeEventStream } from '../stream-writer.js';
import type { SimBehaviour, SimCall, SimWire } from '../types.js';
import { type CallFailure, callFailure } from './call-failure.js';
import { DEFAULT_TEXT, estimateOutputTokens, split } from './messages-answer.js';

export const responsesWire: SimWire = {
  name: 'responses',
  routes: [{ method: 'POST', pattern: /^(?<prefix>.*)\/responses$/, handle: createResponse }],
  modelOf(call) {
    const model = isRecord(call.body) ? call.body.model : undefined;
    return typeof model === 'string' ? model : undefined;
  },
};

type Body = Record<string, unknown>;

interface Answer {
  model: unknown;
  text: string | undefined;
  calls: Array<{ callId: string; name: string; arguments: string }>;
  status: 'completed' | 'incomplete';
  incompleteReason: 'max_output_tokens' | 'content_filter' | undefined;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

async function createResponse(call: SimCall): Promise<void> {
  const requestId = `req_${hex(16)}`;
  const failure = callFailure(call, validate(call.body));
  if (failure !== undefined) return sendError(call.response, failure, requestId);
  const body = call.body as Body;
  const answer = planAnswer(body, call.behaviour);
  const response = responseObject(body, answer, `resp_${hex(24)}`);
  if (body.stream !== true) return sendJson(call.response, 200, response, { 'x-request-id': requestId });
  await writeEventStream(call.response, streamEvents(response, answer, call.behaviour), call.behaviour, {
    ...EVENT_STREAM_HEADERS,
    'x-request-id': requestId,
  });
}

function validate(body: unknown): string | undefined {
  if (!isRecord(body)) return 'We could not parse the JSON body of your request.';
  if (typeof body.model !== 'string' || body.model.length === 0)
    return "Missing required parameter: 'model'.";
  if (typeof body.input !== 'string' && !Array.isArray(body.input))
    return "Missing required parameter: 'input'.";
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) {
    return "Invalid 'max_output_tokens': expected a positive integer.";
  }
  return undefined;
}

function planAnswer(body: Body, behaviour: SimBehaviour): Answer {
  const calls = (behaviour.toolCalls ?? []).map((tool) => {
    const json = JSON.stringify(tool.input);
    const args = behaviour.invalidToolJson === true ? `${json.slice(0, -1)},` : json;
    return { callId: tool.id ?? `call_${hex(12)}`, name: tool.name, arguments: args };
  });
  const text = behaviour.text ?? (calls.length > 0 ? undefined : DEFAULT_TEXT);
  const stop = behaviour.stopReason;
  const incompleteReason =
    stop === 'max_tokens' ? 'max_output_tokens' : stop === 'refusal' ? 'content_filter' : undefined;
  const given = behaviour.usage ?? {};
  return {
    model: behaviour.answerModel ?? body.model,
    text,
    calls,
    status: incompleteReason === undefined ? 'completed' : 'incomplete',
    incompleteReason,
    usage: {
      input: given.input_tokens ?? Math.max(1, Math.ceil(textBytes([body.instructions, body.input]) / 4)),
      output:
        given.output_tokens ??
        estimateOutputTokens(
          text,
          calls.map((call) => call.arguments),
          body.max_output_tokens,
        ),
      cacheRead: given.cache_read_input_tokens ?? 0,
      cacheWrite: given.cache_creation_input_tokens ?? 0,
    },
  };
}

/** UTF-8 bytes of the texts a request carries (instructions, input texts, tool outputs and arguments; never image data). */
function textBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textBytes(item), 0);
  if (!isRecord(value)) return 0;
  return (
    textBytes(value.text) + textBytes(value.content) + textBytes(value.output) + textBytes(value.arguments)
  );
}

function usageBody(usage: Answer['usage']): Body {
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead, cache_write_tokens: usage.cacheWrite },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output,
  };
}

function outputItems(answer: Answer): Body[] {
  const items: Body[] = [];
  if (answer.text !== undefined) {
    items.push({
      id: `msg_${hex(24)}`,
      type: 'message',
      status: 'completed',
      content: [textPart(answer.text)],
      role: 'assistant',
    });
  }
  for (const call of answer.calls) {
    items.push({
      id: `fc_${hex(24)}`,
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.callId,
      name: call.name,
    });
  }
  return items;
}

function textPart(text: string): Body {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function responseObject(body: Body, answer: Answer, id: string): Body {
  const createdAt = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: answer.status,
    background: false,
    completed_at: answer.status === 'completed' ? createdAt : null,
    error: null,
    incomplete_details: answer.incompleteReason === undefined ? null : { reason: answer.incompleteReason },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: answer.model,
    output: outputItems(answer),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: usageBody(answer.usage),
  };
}

/** The stream as SSE event texts; `omitFinish` leaves out the terminal event. */
function streamEvents(final: Body, answer: Answer, behaviour: SimBehaviour): string[] {
  const events: string[] = [];
  const push = (type: string, payload: Body) =>
    events.push(encodeSseEvent(type, JSON.stringify({ type, sequence_number: events.length, ...payload })));
  const inProgress = {
    ...final,
    status: 'in_progress',
    completed_at: null,
    incomplete_details: null,
    output: [],
    usage: null,
  };
  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  const items = final.output as Body[];
  for (const [outputIndex, item] of items.entries()) {
    const itemId = item.id as string;
    const started =
      item.type === 'message'
        ? { ...item, status: 'in_progress', content: [] }
        : { ...item, status: 'in_progress', arguments: '' };
    push('response.output_item.added', { output_index: outputIndex, item: started });
    if (item.type === 'message') {
      const text = answer.text ?? '';
      const where = { item_id: itemId, output_index: outputIndex, content_index: 0 };
      push('response.content_part.added', { ...where, part: textPart('') });
      for (const piece of split(text, behaviour.deltas ?? 4))
        push('response.output_text.delta', { ...where, delta: piece, logprobs: [] });
      push('response.output_text.done', { ...where, text, logprobs: [] });
      push('response.content_part.done', { ...where, part: textPart(text) });
    } else {
      const args = item.arguments as string;
      const where = { item_id: itemId, output_index: outputIndex };
      for (const piece of split(args, 3))
        push('response.function_call_arguments.delta', { ...where, delta: piece });
      push('response.function_call_arguments.done', { ...where, name: item.name, arguments: args });
    }
    push('response.output_item.done', { output_index: outputIndex, item });
  }
  if (behaviour.omitFinish !== true) push(`response.${answer.status}`, { response: final });
  return events;
}

/** Each error status as the real wire labels it: [type, code]. */
const ERROR_LABELS: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

function sendError(response: ServerResponse, failure: CallFailure, requestId: string): void {
  const { status, message, retryAfter } = failure;
  const [type, code] =
    ERROR_LABELS[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  const text = message ?? `Simulated ${type} (HTTP ${status})`;
  sendJson(response, status, { error: { message: text, type, param: null, code } }, headers);
}

function hex(length: number): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
