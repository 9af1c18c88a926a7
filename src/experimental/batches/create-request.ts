/**
 * POST /v1/batches body checks (pure): input_file_id, endpoint (`/v1/messages` or
 * `/v1/chat/completions`: the format of every line, lines.ts), completion_window (only `24h`: the one window every carrier has; the
 * vendora-wire carrier expires a batch 24 hours after creation and accepts no other value), and
 * metadata (at most 16 string pairs, keys up to 64 and values up to 512 characters). Unknown
 * fields are refused.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { CHAT_LINES, type LineFormat, MESSAGES_LINES } from './lines.js';

export interface BatchCreateBody {
  inputFileId: string;
  endpoint: LineFormat;
  completionWindow: '24h';
  metadata: Record<string, string> | null;
}

const FIELDS = new Set(['input_file_id', 'endpoint', 'completion_window', 'metadata']);

const invalid = (message: string, param: string) => new GatewayError('invalid_request', message, { param });

export function checkBatchCreate(body: unknown): BatchCreateBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields))
    if (!FIELDS.has(name)) throw invalid(`${name}: unknown field`, name);
  if (typeof fields.input_file_id !== 'string' || fields.input_file_id === '')
    throw invalid('input_file_id: required', 'input_file_id');
  if (fields.endpoint !== MESSAGES_LINES && fields.endpoint !== CHAT_LINES) {
    throw invalid(
      `endpoint: must be ${MESSAGES_LINES} or ${CHAT_LINES} (the format of the input file's lines)`,
      'endpoint',
    );
  }
  if (fields.completion_window !== '24h')
    throw invalid('completion_window: must be 24h', 'completion_window');
  return {
    inputFileId: fields.input_file_id,
    endpoint: fields.endpoint,
    completionWindow: '24h',
    metadata: checkMetadata(fields.metadata),
  };
}

function checkMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid('metadata: must be an object of strings', 'metadata');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 16) throw invalid('metadata: at most 16 pairs', 'metadata');
  for (const [key, item] of entries) {
    if (key.length > 64 || typeof item !== 'string' || item.length > 512) {
      throw invalid(
        `metadata.${key}: keys are at most 64 characters, values strings of at most 512`,
        'metadata',
      );
    }
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
