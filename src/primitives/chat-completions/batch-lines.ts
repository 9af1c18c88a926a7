/**
 * The chat-batches formats: the input file (one `POST /v1/chat/completions` line per request,
 * never streaming) and the output and error files ({custom_id, response: {status_code, body} |
 * null, error}).
 */
import { isRecord, jsonLines, type LineResult } from '../shared/batch-lines.js';
import type { WireRequest } from '../shared/types.js';

/** One input-file line: the wire request without its streaming fields. */
export function chatBatchLine(customId: string, wire: WireRequest): string {
  const { stream: _stream, stream_options: _options, ...body } = wire.body as Record<string, unknown>;
  return JSON.stringify({ custom_id: customId, method: 'POST', url: `/v1${wire.path}`, body });
}

/** Chat batch output and error file JSONL: {custom_id, response: {status_code, body} | null, error}. */
export function chatBatchResults(text: string): LineResult[] {
  const results: LineResult[] = [];
  for (const line of jsonLines(text)) {
    if (!isRecord(line) || typeof line.custom_id !== 'string') continue;
    const response = isRecord(line.response) ? line.response : undefined;
    const status = typeof response?.status_code === 'number' ? response.status_code : undefined;
    if (response && status !== undefined && status >= 200 && status < 300) {
      results.push({ customId: line.custom_id, kind: 'succeeded', body: response.body, statusCode: status });
    } else if (response && status !== undefined) {
      results.push({ customId: line.custom_id, kind: 'errored', body: response.body, statusCode: status });
    } else {
      const code = isRecord(line.error) ? line.error.code : undefined;
      const kind = code === 'batch_expired' ? 'expired' : code === 'batch_cancelled' ? 'canceled' : 'errored';
      results.push({ customId: line.custom_id, kind, body: line.error, statusCode: 500 });
    }
  }
  return results;
}
