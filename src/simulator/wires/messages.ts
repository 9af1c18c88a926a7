/**
 * The messages wire (vendora), simulated: POST {prefix}/v1/messages (JSON or SSE) and
 * POST {prefix}/v1/messages/count_tokens. Any path prefix is accepted so a base URL such as
 * `/vendora-mantle` works. Bodies and events are built in messages-answer.ts; this file validates,
 * applies the behaviour's failure modes and writes with backpressure.
 */
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http-io.js';
import { EVENT_STREAM_HEADERS, writeEventStream } from '../stream-writer.js';
import type { SimCall, SimWire } from '../types.js';
import { type CallFailure, callFailure } from './call-failure.js';
import {
  countTokens,
  errorBody,
  type MessagesRequestBody,
  messageBody,
  newRequestId,
  planAnswer,
  streamEvents,
} from './messages-answer.js';

export const messagesWire: SimWire = {
  name: 'messages',
  routes: [
    { method: 'POST', pattern: /^(?<prefix>.*)\/v1\/messages$/, handle: createMessage },
    { method: 'POST', pattern: /^(?<prefix>.*)\/v1\/messages\/count_tokens$/, handle: countMessageTokens },
  ],
  modelOf(call) {
    const body = call.body;
    if (typeof body !== 'object' || body === null) return undefined;
    const model = (body as { model?: unknown }).model;
    return typeof model === 'string' ? model : undefined;
  },
};

async function createMessage(call: SimCall): Promise<void> {
  const requestId = newRequestId();
  const failure = callFailure(call, validate(call.body, true));
  if (failure !== undefined) return sendError(call.response, failure, requestId);
  const request = call.body as MessagesRequestBody;
  const answer = planAnswer(request, call.behaviour);
  if (request.stream !== true) return sendJson(call.response, 200, messageBody(answer), headers(requestId));
  await writeEventStream(call.response, streamEvents(answer, call.behaviour), call.behaviour, {
    ...EVENT_STREAM_HEADERS,
    ...headers(requestId),
  });
}

function countMessageTokens(call: SimCall): void {
  const requestId = newRequestId();
  const failure = callFailure(call, validate(call.body, false));
  if (failure !== undefined) {
    sendError(call.response, failure, requestId);
    return;
  }
  const inputTokens = call.behaviour.usage?.input_tokens ?? countTokens(call.body as MessagesRequestBody);
  sendJson(call.response, 200, { input_tokens: inputTokens }, headers(requestId));
}

function sendError(response: ServerResponse, failure: CallFailure, requestId: string): void {
  const extra = headers(requestId);
  if (failure.retryAfter !== undefined) extra['retry-after'] = failure.retryAfter;
  sendJson(response, failure.status, errorBody(failure.status, failure.message, requestId), extra);
}

function headers(requestId: string): Record<string, string> {
  return { 'request-id': requestId };
}

/** The upstream's own 400s for a body it cannot read (messages like the real wire's). */
function validate(body: unknown, create: boolean): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'Request body must be a JSON object';
  const fields = body as Record<string, unknown>;
  if (typeof fields.model !== 'string' || fields.model.length === 0) return 'model: Field required';
  if (!Array.isArray(fields.messages)) return 'messages: Field required';
  if (!create) return undefined;
  if (
    typeof fields.max_tokens !== 'number' ||
    !Number.isInteger(fields.max_tokens) ||
    fields.max_tokens < 0
  ) {
    return 'max_tokens: Field required';
  }
  if (fields.stream !== undefined && typeof fields.stream !== 'boolean')
    return 'stream: Input should be a valid boolean';
  return undefined;
}
