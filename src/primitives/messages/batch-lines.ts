/**
 * The vendora message-batches formats: one inline request per line ({custom_id, params}, never
 * streaming) and the results JSONL ({custom_id, result: {type, message | error}}).
 */
import { isRecord, jsonLines, type LineResult } from '../shared/batch-lines.js';

export const MESSAGE_BATCHES_PATH = '/v1/messages/batches';

/** One inline request of a message batch: the wire body without `stream`. */
export function messageBatchRequest(
  customId: string,
  body: Record<string, unknown>,
): { custom_id: string; params: Record<string, unknown> } {
  const { stream: _stream, ...params } = body;
  return { custom_id: customId, params };
}

/** Message batch results JSONL: {custom_id, result: {type, message | error}}. */
export function messageBatchResults(text: string): LineResult[] {
  const results: LineResult[] = [];
  for (const line of jsonLines(text)) {
    if (!isRecord(line) || typeof line.custom_id !== 'string' || !isRecord(line.result)) continue;
    const result = line.result;
    switch (result.type) {
      case 'succeeded':
        results.push({ customId: line.custom_id, kind: 'succeeded', body: result.message, statusCode: 200 });
        break;
      case 'errored':
        results.push({ customId: line.custom_id, kind: 'errored', body: result.error, statusCode: 400 });
        break;
      case 'canceled':
        results.push({ customId: line.custom_id, kind: 'canceled' });
        break;
      case 'expired':
        results.push({ customId: line.custom_id, kind: 'expired' });
        break;
      default:
        break;
    }
  }
  return results;
}
