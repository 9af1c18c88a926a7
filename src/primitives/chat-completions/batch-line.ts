/**
 * A chat-completions request carried as a batch line in the connection's own format (vendorb batch
 * JSONL, `url: /v1/chat/completions`): what must hold before the batch is created, and the facts
 * its worst-case reservation is priced from. Pure; the gateway maps ChatLineError to its own error
 * naming the line.
 *
 * Refused: no model or messages, an unknown role, `stream: true` (batches do not stream), no
 * output bound (`max_completion_tokens` or `max_tokens`: it bounds the reservation; the gateway
 * fills a line that gives none with its alias's default before this check), and audio input (no
 * price bound for it). `n` multiplies the output bound.
 */

export class ChatLineError extends Error {
  override readonly name = 'ChatLineError';
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(`${param}: ${message}`);
  }
}

export interface ChatLineFacts {
  model: string;
  /** The output bound of the whole line (all choices). */
  maxOutputTokens: number;
  bodyBytes: number;
  /** Bytes of base64 data URIs (priced by the per-image/per-document bound instead of by bytes). */
  embeddedDataBytes: number;
  images: number;
  documents: number;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkChatBatchBody(body: unknown): ChatLineFacts {
  if (!isRecord(body)) throw new ChatLineError('body', 'must be a chat-completions request object');
  if (typeof body.model !== 'string' || body.model === '')
    throw new ChatLineError('body.model', 'a model alias is required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new ChatLineError('body.messages', 'a non-empty array is required');
  }
  if (body.stream === true) throw new ChatLineError('body.stream', 'batch requests cannot stream');
  const bound = body.max_completion_tokens ?? body.max_tokens;
  if (typeof bound !== 'number' || !Number.isSafeInteger(bound) || bound < 1) {
    throw new ChatLineError(
      'body.max_completion_tokens',
      'a positive integer is required (it bounds the reservation)',
    );
  }
  const choices = body.n ?? 1;
  if (typeof choices !== 'number' || !Number.isSafeInteger(choices) || choices < 1 || choices > 128) {
    throw new ChatLineError('body.n', 'must be an integer from 1 to 128');
  }
  const facts = { embeddedDataBytes: 0, images: 0, documents: 0 };
  body.messages.forEach((message, index) => {
    countParts(message, `body.messages[${index}]`, facts);
  });
  return {
    model: body.model,
    maxOutputTokens: bound * choices,
    bodyBytes: Buffer.byteLength(JSON.stringify(body)),
    ...facts,
  };
}

function countParts(
  message: unknown,
  at: string,
  facts: Omit<ChatLineFacts, 'model' | 'maxOutputTokens' | 'bodyBytes'>,
): void {
  if (!isRecord(message) || typeof message.role !== 'string' || !ROLES.has(message.role)) {
    throw new ChatLineError(`${at}.role`, `must be one of ${[...ROLES].join(', ')}`);
  }
  if (!Array.isArray(message.content)) return;
  for (const part of message.content) {
    if (!isRecord(part)) continue;
    if (part.type === 'input_audio')
      throw new ChatLineError(`${at}.content`, 'audio input is not accepted in batches');
    const url = part.type === 'image_url' && isRecord(part.image_url) ? part.image_url.url : undefined;
    const file = part.type === 'file' && isRecord(part.file) ? part.file.file_data : undefined;
    if (part.type === 'image_url') facts.images += 1;
    if (part.type === 'file') facts.documents += 1;
    for (const data of [url, file]) {
      if (typeof data === 'string' && data.startsWith('data:'))
        facts.embeddedDataBytes += Buffer.byteLength(data);
    }
  }
}

/** The line's body as sent upstream: the alias replaced by the target's model id. */
export function withUpstreamModel(
  body: Record<string, unknown>,
  upstreamModel: string,
): Record<string, unknown> {
  return { ...body, model: upstreamModel };
}
