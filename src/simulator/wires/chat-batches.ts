/**
 * Files and batches on the chat-completions wire (vendorb and compatible vendors), simulated. The
 * two share state because a batch reads its input file and writes its output and error files:
 *   POST   {prefix}/files                 multipart (file, purpose) -> FileObject (`file-` id)
 *   GET    {prefix}/files/{id}            FileObject
 *   GET    {prefix}/files/{id}/content    the bytes
 *   DELETE {prefix}/files/{id}            {id, object: 'file', deleted: true}
 *   POST   {prefix}/batches               {input_file_id, endpoint, completion_window} -> batch (validating)
 *   GET    {prefix}/batches/{id}          batch: validating -> in_progress -> completed (output file)
 *   POST   {prefix}/batches/{id}/cancel   batch (cancelling; cancelled at the next read, error file
 *                                         lines `batch_cancelled`)
 * Faithful points: unix-second times, `object` fields, output lines `{id: batch_req_..., custom_id,
 * response: {status_code, request_id, body}, error}` whose body is a `chat.completion` built like
 * the chat wire's (chat-completions-answer.ts). `batchPolls` (behaviour at creation) status reads
 * report in_progress before the batch completes (default 1); `status` >= 400 refuses the create.
 */
import { randomBytes } from 'node:crypto';
import { sendJson } from '../http-io.js';
import type { SimCall, SimWire, SimWireState } from '../types.js';
import { completionBody, planAnswer } from './chat-completions-answer.js';
import { chatResourcesWire, type SimFile } from './chat-resources.js';

interface SimBatch {
  id: string;
  inputFileId: string;
  createdAt: number;
  status: 'validating' | 'in_progress' | 'completed' | 'cancelling' | 'cancelled';
  pollsLeft: number;
  outputFileId: string | null;
  errorFileId: string | null;
  lines: Array<{ customId: string; body: Record<string, unknown> }>;
  cancelledAt: number | null;
  completedAt: number | null;
}

function table<T>(state: SimWireState, name: string): Map<string, T> {
  let found = state.get(name) as Map<string, T> | undefined;
  if (!found) {
    found = new Map();
    state.set(name, found);
  }
  return found;
}

const hex = (length: number) => randomBytes(length).toString('hex').slice(0, length);
const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

function error(call: SimCall, status: number, message: string): void {
  sendJson(call.response, status, {
    error: { message, type: 'invalid_request_error', param: null, code: null },
  });
}

function batchView(batch: SimBatch): Record<string, unknown> {
  const done = batch.status === 'completed';
  return {
    id: batch.id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    input_file_id: batch.inputFileId,
    completion_window: '24h',
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    errors: null,
    created_at: seconds(batch.createdAt),
    in_progress_at: batch.status === 'validating' ? null : seconds(batch.createdAt),
    expires_at: seconds(batch.createdAt + 86_400_000),
    completed_at: seconds(batch.completedAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: { total: batch.lines.length, completed: done ? batch.lines.length : 0, failed: 0 },
    metadata: null,
  };
}

function createBatch(call: SimCall, state: SimWireState): void {
  const status = call.behaviour.status;
  if (status !== undefined && status >= 400) {
    error(call, status, call.behaviour.errorMessage ?? 'Simulated batch refusal.');
    return;
  }
  const body = (call.body ?? {}) as Record<string, unknown>;
  const input = table<SimFile>(state, 'files').get(String(body.input_file_id));
  if (!input) {
    error(call, 400, `Invalid 'input_file_id': ${String(body.input_file_id)}.`);
    return;
  }
  if (body.endpoint !== '/v1/chat/completions' || body.completion_window !== '24h') {
    error(call, 400, "Invalid 'endpoint' or 'completion_window'.");
    return;
  }
  const lines: SimBatch['lines'] = [];
  for (const text of input.bytes.toString('utf8').split('\n')) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as { custom_id: string; body: Record<string, unknown> };
    lines.push({ customId: line.custom_id, body: completionBody(planAnswer(line.body, call.behaviour)) });
  }
  const batch: SimBatch = {
    id: `batch_${hex(24)}`,
    inputFileId: input.id,
    createdAt: Date.now(),
    status: 'validating',
    pollsLeft: call.behaviour.batchPolls ?? 1,
    outputFileId: null,
    errorFileId: null,
    lines,
    cancelledAt: null,
    completedAt: null,
  };
  table<SimBatch>(state, 'batches').set(batch.id, batch);
  sendJson(call.response, 200, batchView(batch));
}

function writeFile(state: SimWireState, batch: SimBatch, lines: string[], kind: string): string {
  const file: SimFile = {
    id: `file-${hex(24)}`,
    filename: `${batch.id}_${kind}.jsonl`,
    purpose: 'batch_output',
    createdAt: Math.floor(Date.now() / 1000),
    bytes: Buffer.from(`${lines.join('\n')}\n`),
  };
  table<SimFile>(state, 'files').set(file.id, file);
  return file.id;
}

function advance(state: SimWireState, batch: SimBatch): void {
  if (batch.status === 'validating') {
    batch.status = 'in_progress';
  } else if (batch.status === 'cancelling') {
    batch.status = 'cancelled';
    batch.cancelledAt = Date.now();
    const lines = batch.lines.map((line) =>
      JSON.stringify({
        id: `batch_req_${hex(24)}`,
        custom_id: line.customId,
        response: null,
        error: { code: 'batch_cancelled', message: 'Batch cancelled.' },
      }),
    );
    if (lines.length > 0) batch.errorFileId = writeFile(state, batch, lines, 'error');
  } else if (batch.status === 'in_progress') {
    if (batch.pollsLeft > 0) {
      batch.pollsLeft -= 1;
      return;
    }
    batch.status = 'completed';
    batch.completedAt = Date.now();
    const lines = batch.lines.map((line) =>
      JSON.stringify({
        id: `batch_req_${hex(24)}`,
        custom_id: line.customId,
        response: { status_code: 200, request_id: `req_${hex(24)}`, body: line.body },
        error: null,
      }),
    );
    batch.outputFileId = writeFile(state, batch, lines, 'output');
  }
}

function batchOf(call: SimCall, state: SimWireState): SimBatch | undefined {
  const batch = table<SimBatch>(state, 'batches').get(call.params.id ?? '');
  if (!batch) error(call, 404, `No such batch: ${call.params.id}`);
  return batch;
}

function retrieveBatch(call: SimCall, state: SimWireState): void {
  const batch = batchOf(call, state);
  if (!batch) return;
  advance(state, batch);
  sendJson(call.response, 200, batchView(batch));
}

function cancelBatch(call: SimCall, state: SimWireState): void {
  const batch = batchOf(call, state);
  if (!batch) return;
  if (batch.status === 'validating' || batch.status === 'in_progress') batch.status = 'cancelling';
  sendJson(call.response, 200, batchView(batch));
}

/**
 * Named like the resources wire (chat-resources.ts) on purpose: file calls are recorded, and matched by
 * behaviours, as 'chat-side' whichever of the two serves them; batch calls are 'chat-side' too.
 */
export const chatBatchesWire: SimWire = {
  name: 'chat-side',
  routes: [
    // The file routes of chat-resources.ts, bound to this wire's state so batches see the files.
    ...chatResourcesWire.routes.filter((route) => route.pattern.source.includes('files')),
    { method: 'POST', pattern: /^(?<prefix>.*)\/batches$/, handle: createBatch },
    { method: 'GET', pattern: /^(?<prefix>.*)\/batches\/(?<id>[^/]+)$/, handle: retrieveBatch },
    { method: 'POST', pattern: /^(?<prefix>.*)\/batches\/(?<id>[^/]+)\/cancel$/, handle: cancelBatch },
  ],
  modelOf: () => undefined,
};
