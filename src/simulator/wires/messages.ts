/**
 * The messages wire (vendora), simulated: POST {prefix}/v1/messages (JSON or SSE) and
 * POST {prefix}/v1/messages/count_tokens. Any path prefix is accepted so a base URL such as
 * `/vendora-mantle` works. Bodies and events are built in messages-answer.ts; this file validates,
 * applies the behaviour's failure modes and writes with backpressure.
 */
import type { ServerResponse } from 'node:http';
import { flushed, sendJson, sleep, writeChunk } from '../http-io.js';
import type { SimBehaviour, SimCall, SimWire } from '../types.js';
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
  const invalid = validate(call.body, true);
  if (invalid !== undefined)
    return sendJson(call.response, 400, errorBody(400, invalid, requestId), headers(requestId));
  if (answerWithError(call, requestId)) return;
  const request = call.body as MessagesRequestBody;
  const answer = planAnswer(request, call.behaviour);
  if (request.stream !== true) return sendJson(call.response, 200, messageBody(answer), headers(requestId));
  await writeStream(call.response, streamEvents(answer, call.behaviour), call.behaviour, requestId);
}

function countMessageTokens(call: SimCall): void {
  const requestId = newRequestId();
  const invalid = validate(call.body, false);
  if (invalid !== undefined) {
    sendJson(call.response, 400, errorBody(400, invalid, requestId), headers(requestId));
  } else if (!answerWithError(call, requestId)) {
    const inputTokens = call.behaviour.usage?.input_tokens ?? countTokens(call.body as MessagesRequestBody);
    sendJson(call.response, 200, { input_tokens: inputTokens }, headers(requestId));
  }
}

function answerWithError(call: SimCall, requestId: string): boolean {
  const status = call.behaviour.status;
  if (status === undefined || status < 400) return false;
  const extra = headers(requestId);
  if (call.behaviour.retryAfter !== undefined) extra['retry-after'] = call.behaviour.retryAfter;
  sendJson(call.response, status, errorBody(status, call.behaviour.errorMessage, requestId), extra);
  return true;
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

/**
 * Writes the events. Without `eventDelayMs` the events go out in one write (fast path for benchmarks);
 * with it, one write per event with the delay in between. `dropAfterEvents` destroys the socket once
 * that many events were flushed; `stallAfterEvents` stops writing and leaves the response open.
 */
async function writeStream(
  response: ServerResponse,
  events: string[],
  behaviour: SimBehaviour,
  requestId: string,
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId,
  });
  const drop = behaviour.dropAfterEvents;
  const stall = behaviour.stallAfterEvents;
  const limit = Math.min(events.length, drop ?? Number.POSITIVE_INFINITY, stall ?? Number.POSITIVE_INFINITY);
  const delay = behaviour.eventDelayMs ?? 0;
  if (delay > 0 || limit === 0) response.flushHeaders();
  if (delay > 0) {
    for (let index = 0; index < limit; index++) {
      if (index > 0) await sleep(delay);
      if (!(await writeChunk(response, events[index]!))) return;
    }
  } else if (limit > 0) {
    if (!(await writeChunk(response, events.slice(0, limit).join('')))) return;
  }
  if (drop !== undefined && drop <= limit) {
    await flushed(response);
    response.destroy();
    return;
  }
  if (stall !== undefined && stall <= limit) return;
  response.end();
}
