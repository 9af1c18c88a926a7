/**
 * Message batches on the messages wire (vendora), simulated:
 *   POST {prefix}/v1/messages/batches              {requests: [{custom_id, params}]} -> batch
 *   GET  {prefix}/v1/messages/batches/{id}         batch (processing_status in_progress | canceling | ended)
 *   POST {prefix}/v1/messages/batches/{id}/cancel  batch (canceling)
 *   GET  {prefix}/v1/messages/batches/{id}/results JSONL, one line per request, once ended
 * Faithful points: `msgbatch_` ids, `type: message_batch`, RFC 3339 times, request_counts that are
 * all `processing` until the whole batch ends, an absolute `results_url`, result lines
 * `{custom_id, result: {type: succeeded, message} | {type: canceled}}`.
 * Progression is controlled by the behaviour at creation: `batchPolls` status reads report the
 * batch running before it ends (default 1); a cancel ends it at the next read with every request
 * canceled. Answers are built like the messages wire's (messages-answer.ts); `status` >= 400 at
 * creation refuses the batch with that status.
 */
import { randomBase32 } from '../../lib/ids.js';
import { sendJson } from '../http-io.js';
import type { SimCall, SimWire, SimWireState } from '../types.js';
import {
  errorBody,
  type MessagesRequestBody,
  messageBody,
  newRequestId,
  planAnswer,
} from './messages-answer.js';

interface SimBatch {
  id: string;
  createdAt: number;
  pollsLeft: number;
  state: 'in_progress' | 'canceling' | 'ended';
  endedAt: number | null;
  cancelAt: number | null;
  lines: Array<{ customId: string; message: Record<string, unknown> }>;
  canceled: boolean;
}

const batches = (state: SimWireState): Map<string, SimBatch> => {
  let found = state.get('batches') as Map<string, SimBatch> | undefined;
  if (!found) {
    found = new Map();
    state.set('batches', found);
  }
  return found;
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function view(batch: SimBatch, call: SimCall): Record<string, unknown> {
  const total = batch.lines.length;
  const ended = batch.state === 'ended';
  const host = call.request.headers.host ?? '127.0.0.1';
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: batch.state,
    request_counts: {
      processing: ended ? 0 : total,
      succeeded: ended && !batch.canceled ? total : 0,
      errored: 0,
      canceled: ended && batch.canceled ? total : 0,
      expired: 0,
    },
    created_at: iso(batch.createdAt),
    expires_at: iso(batch.createdAt + 86_400_000),
    ended_at: iso(batch.endedAt),
    cancel_initiated_at: iso(batch.cancelAt),
    archived_at: null,
    results_url: ended
      ? `http://${host}${call.params.prefix ?? ''}/v1/messages/batches/${batch.id}/results`
      : null,
  };
}

function create(call: SimCall, state: SimWireState): void {
  const requestId = newRequestId();
  const status = call.behaviour.status;
  if (status !== undefined && status >= 400) {
    sendJson(call.response, status, errorBody(status, call.behaviour.errorMessage, requestId));
    return;
  }
  const body = call.body as { requests?: unknown } | undefined;
  if (!body || !Array.isArray(body.requests) || body.requests.length === 0) {
    sendJson(call.response, 400, errorBody(400, 'requests: Field required', requestId));
    return;
  }
  const lines: SimBatch['lines'] = [];
  for (const item of body.requests as Array<{ custom_id?: unknown; params?: unknown }>) {
    const params = item.params as MessagesRequestBody | undefined;
    if (
      typeof item.custom_id !== 'string' ||
      !params ||
      typeof params.model !== 'string' ||
      !Array.isArray(params.messages)
    ) {
      sendJson(
        call.response,
        400,
        errorBody(400, 'requests: each item needs custom_id and params', requestId),
      );
      return;
    }
    lines.push({ customId: item.custom_id, message: messageBody(planAnswer(params, call.behaviour)) });
  }
  const batch: SimBatch = {
    id: `msgbatch_01${randomBase32(22)}`,
    createdAt: Date.now(),
    pollsLeft: call.behaviour.batchPolls ?? 1,
    state: 'in_progress',
    endedAt: null,
    cancelAt: null,
    lines,
    canceled: false,
  };
  batches(state).set(batch.id, batch);
  sendJson(call.response, 200, view(batch, call), { 'request-id': requestId });
}

function found(call: SimCall, state: SimWireState): SimBatch | undefined {
  const batch = batches(state).get(call.params.id ?? '');
  if (!batch) sendJson(call.response, 404, errorBody(404, `No batch ${call.params.id}`, newRequestId()));
  return batch;
}

function retrieve(call: SimCall, state: SimWireState): void {
  const batch = found(call, state);
  if (!batch) return;
  if (batch.state !== 'ended') {
    if (batch.state === 'canceling' || batch.pollsLeft <= 0) {
      batch.state = 'ended';
      batch.endedAt = Date.now();
    } else {
      batch.pollsLeft -= 1;
    }
  }
  sendJson(call.response, 200, view(batch, call), { 'request-id': newRequestId() });
}

function cancel(call: SimCall, state: SimWireState): void {
  const batch = found(call, state);
  if (!batch) return;
  if (batch.state === 'in_progress') {
    batch.state = 'canceling';
    batch.canceled = true;
    batch.cancelAt = Date.now();
  }
  sendJson(call.response, 200, view(batch, call), { 'request-id': newRequestId() });
}

function results(call: SimCall, state: SimWireState): void {
  const batch = found(call, state);
  if (!batch) return;
  if (batch.state !== 'ended') {
    sendJson(call.response, 400, errorBody(400, 'The batch has not ended yet', newRequestId()));
    return;
  }
  const text = batch.lines
    .map((line) =>
      JSON.stringify({
        custom_id: line.customId,
        result: batch.canceled ? { type: 'canceled' } : { type: 'succeeded', message: line.message },
      }),
    )
    .join('\n');
  call.response.writeHead(200, {
    'content-type': 'application/binary',
    'content-length': Buffer.byteLength(`${text}\n`),
  });
  call.response.end(`${text}\n`);
}

export const messageBatchesWire: SimWire = {
  name: 'message-batches',
  routes: [
    { method: 'POST', pattern: /^(?<prefix>.*)\/v1\/messages\/batches$/, handle: create },
    { method: 'GET', pattern: /^(?<prefix>.*)\/v1\/messages\/batches\/(?<id>[^/]+)$/, handle: retrieve },
    {
      method: 'POST',
      pattern: /^(?<prefix>.*)\/v1\/messages\/batches\/(?<id>[^/]+)\/cancel$/,
      handle: cancel,
    },
    {
      method: 'GET',
      pattern: /^(?<prefix>.*)\/v1\/messages\/batches\/(?<id>[^/]+)\/results$/,
      handle: results,
    },
  ],
  modelOf: () => undefined,
};
