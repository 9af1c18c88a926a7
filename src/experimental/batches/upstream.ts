/**
 * The two upstream batch APIs, behind one small interface (I/O only; translation is translate.ts):
 *   message-batches (vendora wire): POST {base}/v1/messages/batches with the requests inline,
 *     GET .../{id}, POST .../{id}/cancel, results from the batch's results_url (fetched from the
 *     connection's own origin: the absolute URL the upstream gives is never followed elsewhere).
 *   chat-batches (chat-completions wire): POST {base}/files (the translated JSONL, purpose batch),
 *     POST {base}/batches, GET {base}/batches/{id}, POST .../cancel, GET {base}/files/{id}/content.
 * Results are read up to the configured ceiling and never truncated: above it the caller is told
 * the results are too large (the batch becomes undeliverable).
 */
import { randomBytes } from 'node:crypto';
import type { Connection } from '../../gateway/connections.js';
import { chatBatchResults } from '../../primitives/chat-completions/batch-lines.js';
import { messageBatchResults } from '../../primitives/messages/batch-lines.js';
import { VENDORA_VERSION } from '../../primitives/messages/index.js';
import type { LineResult } from '../../primitives/shared/batch-lines.js';
import { callUpstream, readJsonBody, type UpstreamResponse } from '../../primitives/shared/upstream-call.js';
import { callUpstreamRaw } from '../../primitives/shared/upstream-raw.js';
import type { BatchCarrier, BatchError } from '../../store/batches-port.js';

/** The upstream answered the call with an error status. */
export class UpstreamRejected extends Error {
  override readonly name = 'UpstreamRejected';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type UpstreamState =
  | { ended: false }
  | {
      ended: true;
      outcome: 'ended' | 'failed' | 'expired' | 'cancelled';
      errors: BatchError[];
      resultFiles: string[];
    };

export type ResultsRead = { kind: 'ok'; results: LineResult[] } | { kind: 'too_large' };

const VENDORA_HEADERS = { 'vendora-version': VENDORA_VERSION };
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

async function json(
  connection: Connection,
  response: UpstreamResponse,
  what: string,
): Promise<Record<string, unknown>> {
  const body = await readJsonBody(response.body, connection.name);
  if (response.status < 200 || response.status >= 300) {
    const message =
      isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string'
        ? body.error.message
        : `HTTP ${response.status}`;
    throw new UpstreamRejected(response.status, `${connection.name} refused ${what}: ${message}`);
  }
  if (!isRecord(body))
    throw new UpstreamRejected(
      502,
      `${connection.name} answered ${what} with something that is not a JSON object`,
    );
  return body;
}

/** Reads a body up to `ceiling` bytes; undefined (and the body destroyed) above it. */
async function readBounded(response: UpstreamResponse, ceiling: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += buffer.length;
    if (total > ceiling) {
      response.body.destroy();
      return undefined;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function stripBase(connection: Connection, url: string): string {
  const parsed = new URL(url, connection.origin);
  const path = `${parsed.pathname}${parsed.search}`;
  return connection.basePath !== '' && path.startsWith(connection.basePath)
    ? path.slice(connection.basePath.length)
    : path;
}

export async function submitBatch(
  carrier: BatchCarrier,
  connection: Connection,
  payload: Buffer,
  signal: AbortSignal,
): Promise<{ upstreamBatchId: string; upstreamInputFileId: string | null }> {
  switch (carrier) {
    case 'message-batches': {
      const response = await callUpstream(connection, {
        path: '/v1/messages/batches',
        body: JSON.parse(payload.toString('utf8')) as unknown,
        headers: VENDORA_HEADERS,
        signal,
      });
      const batch = await json(connection, response, 'the message batch');
      if (typeof batch.id !== 'string')
        throw new UpstreamRejected(502, `${connection.name} answered the message batch without an id`);
      return { upstreamBatchId: batch.id, upstreamInputFileId: null };
    }
    case 'chat-batches': {
      const boundary = `----svc-batch-${randomBytes(12).toString('hex')}`;
      const form = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`),
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="batch-input.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`,
        ),
        payload,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const uploaded = await json(
        connection,
        await callUpstreamRaw(connection, {
          method: 'POST',
          path: '/files',
          headers: {
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(form.length),
          },
          body: form,
          signal,
        }),
        'the batch input file',
      );
      if (typeof uploaded.id !== 'string')
        throw new UpstreamRejected(502, `${connection.name} answered the upload without a file id`);
      const response = await callUpstream(connection, {
        path: '/batches',
        body: { input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
        signal,
      });
      const batch = await json(connection, response, 'the batch');
      if (typeof batch.id !== 'string')
        throw new UpstreamRejected(502, `${connection.name} answered the batch without an id`);
      return { upstreamBatchId: batch.id, upstreamInputFileId: uploaded.id };
    }
    default: {
      const never: never = carrier;
      throw new Error(`unknown carrier ${String(never)}`);
    }
  }
}

export async function pollBatch(
  carrier: BatchCarrier,
  connection: Connection,
  upstreamId: string,
  signal: AbortSignal,
): Promise<UpstreamState> {
  switch (carrier) {
    case 'message-batches': {
      const path = `/v1/messages/batches/${encodeURIComponent(upstreamId)}`;
      const batch = await json(
        connection,
        await callUpstreamRaw(connection, { method: 'GET', path, headers: VENDORA_HEADERS, signal }),
        'the batch status',
      );
      if (batch.processing_status !== 'ended') return { ended: false };
      const resultsUrl = typeof batch.results_url === 'string' ? batch.results_url : `${path}/results`;
      const counts = isRecord(batch.request_counts) ? batch.request_counts : {};
      const outcome = Number(counts.expired ?? 0) > 0 ? 'expired' : 'ended';
      return { ended: true, outcome, errors: [], resultFiles: [stripBase(connection, resultsUrl)] };
    }
    case 'chat-batches': {
      const path = `/batches/${encodeURIComponent(upstreamId)}`;
      const batch = await json(
        connection,
        await callUpstreamRaw(connection, { method: 'GET', path, signal }),
        'the batch status',
      );
      const status = batch.status;
      if (status !== 'completed' && status !== 'failed' && status !== 'expired' && status !== 'cancelled')
        return { ended: false };
      const files = [batch.output_file_id, batch.error_file_id]
        .filter((id): id is string => typeof id === 'string' && id !== '')
        .map((id) => `/files/${encodeURIComponent(id)}/content`);
      const errors: BatchError[] = [];
      const listed = isRecord(batch.errors) && Array.isArray(batch.errors.data) ? batch.errors.data : [];
      for (const item of listed) {
        if (!isRecord(item)) continue;
        errors.push({
          code: String(item.code ?? 'upstream_failed'),
          message: String(item.message ?? 'The upstream failed the batch.'),
          param: typeof item.param === 'string' ? item.param : null,
          line: typeof item.line === 'number' ? item.line : null,
        });
      }
      return { ended: true, outcome: status === 'completed' ? 'ended' : status, errors, resultFiles: files };
    }
    default: {
      const never: never = carrier;
      throw new Error(`unknown carrier ${String(never)}`);
    }
  }
}

export async function cancelBatch(
  carrier: BatchCarrier,
  connection: Connection,
  upstreamId: string,
  signal: AbortSignal,
): Promise<void> {
  const path =
    carrier === 'message-batches'
      ? `/v1/messages/batches/${encodeURIComponent(upstreamId)}/cancel`
      : `/batches/${encodeURIComponent(upstreamId)}/cancel`;
  const response = await callUpstream(connection, {
    path,
    body: {},
    headers: carrier === 'message-batches' ? VENDORA_HEADERS : {},
    signal,
  });
  await json(connection, response, 'the batch cancel');
}

/** Downloads every result file; the sum of their sizes is held to `ceiling`. */
export async function readResults(
  carrier: BatchCarrier,
  connection: Connection,
  files: string[],
  ceiling: number,
  signal: AbortSignal,
): Promise<ResultsRead> {
  const results: LineResult[] = [];
  let left = ceiling;
  for (const path of files) {
    const response = await callUpstreamRaw(connection, {
      method: 'GET',
      path,
      headers: carrier === 'message-batches' ? VENDORA_HEADERS : {},
      signal,
    });
    if (response.status < 200 || response.status >= 300) {
      await readJsonBody(response.body, connection.name).catch(() => undefined);
      throw new UpstreamRejected(
        response.status,
        `${connection.name} refused the batch results (HTTP ${response.status})`,
      );
    }
    const text = await readBounded(response, left);
    if (text === undefined) return { kind: 'too_large' };
    left -= Buffer.byteLength(text);
    results.push(...(carrier === 'message-batches' ? messageBatchResults(text) : chatBatchResults(text)));
  }
  return { kind: 'ok', results };
}
