/**
 * The chat-completions wire's resources (files and the media endpoints), simulated (any path
 * prefix, so /v1 or /openai/v1 base URLs work):
 *   POST {prefix}/files (multipart: file, purpose)      -> FileObject (`file-` id, unix created_at)
 *   GET {prefix}/files/{id}, GET .../content, DELETE    -> FileObject, raw bytes, {id, object, deleted}
 *   POST {prefix}/audio/speech (JSON)                   -> binary audio, content type per format
 *   POST {prefix}/audio/transcriptions (multipart)      -> {text, usage: {type: duration, seconds}},
 *                                                          verbose_json, or text/plain for text/srt/vtt
 *   POST {prefix}/images/generations (JSON)             -> {created, data[n]: url | b64_json, usage}
 *   POST {prefix}/moderations (JSON)                    -> {id: modr-..., model, results[one per input]}
 * Errors as `{error: {message, type, param, code}}`. Behaviour: `status`/`errorMessage`/`retryAfter`
 * answer an error; `text` is the transcript or revised prompt. Deterministic answers: audio =
 * a fixed header + the input text; a transcription lasts ceil(bytes / 16000) seconds; an input
 * containing "flag-me" is flagged by moderation.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http-io.js';
import type { SimCall, SimWire, SimWireState } from '../types.js';

/** An uploaded file (chat-batches.ts reads and writes these too: its batches live on these files). */
export interface SimFile {
  id: string;
  bytes: Buffer;
  filename: string;
  purpose: string;
  /** Unix seconds. */
  createdAt: number;
}

type Body = Record<string, unknown>;

const AUDIO_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** A 1x1 transparent PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

export const chatResourcesWire: SimWire = {
  name: 'chat-side',
  routes: [
    { method: 'POST', pattern: /^(?<prefix>.*)\/files$/, handle: uploadFile },
    { method: 'GET', pattern: /^(?<prefix>.*)\/files\/(?<id>[^/]+)\/content$/, handle: fileContent },
    { method: 'GET', pattern: /^(?<prefix>.*)\/files\/(?<id>[^/]+)$/, handle: getFile },
    { method: 'DELETE', pattern: /^(?<prefix>.*)\/files\/(?<id>[^/]+)$/, handle: deleteFile },
    { method: 'POST', pattern: /^(?<prefix>.*)\/audio\/speech$/, handle: speech },
    { method: 'POST', pattern: /^(?<prefix>.*)\/audio\/transcriptions$/, handle: transcription },
    { method: 'POST', pattern: /^(?<prefix>.*)\/images\/generations$/, handle: images },
    { method: 'POST', pattern: /^(?<prefix>.*)\/moderations$/, handle: moderations },
  ],
};

export function token(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('');
}

export function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  param: string | null = null,
  retryAfter?: string,
): void {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  const headers: Record<string, string> = { 'x-request-id': `req_${token(24)}` };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  sendJson(response, status, { error: { message, type, param, code: null } }, headers);
}

/** Answers the behaviour's error, if it sets one; true when it did. */
export function behaviourError(call: SimCall): boolean {
  const status = call.behaviour.status;
  if (status === undefined || status < 400) return false;
  sendError(
    call.response,
    status,
    call.behaviour.errorMessage ?? 'Simulated error.',
    null,
    call.behaviour.retryAfter,
  );
  return true;
}

function isRecord(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function formOf(call: SimCall): Promise<FormData | undefined> {
  const type = call.request.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('multipart/form-data')) return undefined;
  try {
    return await new Response(call.rawBody, { headers: { 'content-type': type } }).formData();
  } catch {
    return undefined;
  }
}

function files(state: SimWireState): Map<string, SimFile> {
  let map = state.get('files') as Map<string, SimFile> | undefined;
  if (!map) {
    map = new Map();
    state.set('files', map);
  }
  return map;
}

function fileObject(file: SimFile) {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes.length,
    created_at: file.createdAt,
    expires_at: null,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
  };
}

async function uploadFile(call: SimCall, state: SimWireState): Promise<void> {
  if (behaviourError(call)) return;
  const form = await formOf(call);
  if (!form) return sendError(call.response, 400, 'The request must be multipart/form-data.');
  const file = form.get('file');
  const purpose = form.get('purpose');
  if (!(file instanceof Blob))
    return sendError(call.response, 400, "Missing required parameter: 'file'.", 'file');
  if (typeof purpose !== 'string' || purpose === '')
    return sendError(call.response, 400, "Missing required parameter: 'purpose'.", 'purpose');
  const record: SimFile = {
    id: `file-${token(24)}`,
    bytes: Buffer.from(await file.arrayBuffer()),
    filename: file instanceof File ? file.name : 'upload',
    purpose,
    createdAt: Math.floor(Date.now() / 1000),
  };
  files(state).set(record.id, record);
  sendJson(call.response, 200, fileObject(record));
}

function found(call: SimCall, state: SimWireState): SimFile | undefined {
  const file = files(state).get(call.params.id ?? '');
  if (!file) sendError(call.response, 404, `No such File object: ${call.params.id ?? ''}`, 'id');
  return file;
}

function getFile(call: SimCall, state: SimWireState) {
  if (behaviourError(call)) return;
  const file = found(call, state);
  if (file) sendJson(call.response, 200, fileObject(file));
}

function fileContent(call: SimCall, state: SimWireState) {
  if (behaviourError(call)) return;
  const file = found(call, state);
  if (!file) return;
  call.response.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': file.bytes.length,
  });
  call.response.end(file.bytes);
}

function deleteFile(call: SimCall, state: SimWireState) {
  if (behaviourError(call)) return;
  const file = found(call, state);
  if (!file) return;
  files(state).delete(file.id);
  sendJson(call.response, 200, { id: file.id, object: 'file', deleted: true });
}

function speech(call: SimCall) {
  if (behaviourError(call)) return;
  const body = call.body;
  if (!isRecord(body))
    return sendError(call.response, 400, 'We could not parse the JSON body of your request.');
  for (const field of ['model', 'input', 'voice']) {
    if (body[field] === undefined)
      return sendError(call.response, 400, `Missing required parameter: '${field}'.`, field);
  }
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const contentType = AUDIO_TYPES[format];
  if (!contentType)
    return sendError(
      call.response,
      400,
      `Invalid value for 'response_format': ${format}.`,
      'response_format',
    );
  const audio = Buffer.concat([
    Buffer.from(`SIMAUDIO:${format}:`, 'utf8'),
    Buffer.from(String(body.input), 'utf8'),
  ]);
  call.response.writeHead(200, {
    'content-type': contentType,
    'content-length': audio.length,
    'x-request-id': `req_${token(24)}`,
  });
  call.response.end(audio);
}

async function transcription(call: SimCall): Promise<void> {
  if (behaviourError(call)) return;
  const form = await formOf(call);
  if (!form) return sendError(call.response, 400, 'The request must be multipart/form-data.');
  const file = form.get('file');
  if (!(file instanceof Blob))
    return sendError(call.response, 400, "Missing required parameter: 'file'.", 'file');
  if (typeof form.get('model') !== 'string')
    return sendError(call.response, 400, "Missing required parameter: 'model'.", 'model');
  const seconds = Math.max(1, Math.ceil(file.size / 16_000));
  const text = call.behaviour.text ?? `Transcribed ${file.size} bytes of audio.`;
  const format = String(form.get('response_format') ?? 'json');
  switch (format) {
    case 'json':
      return sendJson(call.response, 200, { text, usage: { type: 'duration', seconds } });
    case 'verbose_json':
      return sendJson(call.response, 200, {
        task: 'transcribe',
        language: String(form.get('language') ?? 'english'),
        duration: seconds,
        text,
        segments: [],
        usage: { type: 'duration', seconds },
      });
    case 'text':
    case 'srt':
    case 'vtt': {
      const body =
        format === 'text'
          ? text
          : format === 'srt'
            ? `1\n00:00:00,000 --> 00:00:0${Math.min(seconds, 9)},000\n${text}\n`
            : `WEBVTT\n\n00:00.000 --> 00:0${Math.min(seconds, 9)}.000\n${text}\n`;
      call.response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      call.response.end(body);
      return;
    }
    default:
      return sendError(
        call.response,
        400,
        `Invalid value for 'response_format': ${format}.`,
        'response_format',
      );
  }
}

function images(call: SimCall) {
  if (behaviourError(call)) return;
  const body = call.body;
  if (!isRecord(body) || typeof body.prompt !== 'string')
    return sendError(call.response, 400, "Missing required parameter: 'prompt'.", 'prompt');
  const n = typeof body.n === 'number' ? body.n : 1;
  if (!Number.isInteger(n) || n < 1 || n > 10)
    return sendError(call.response, 400, "Invalid 'n': must be from 1 to 10.", 'n');
  const revised = call.behaviour.text ?? `A simulated picture of ${body.prompt}`;
  const data = Array.from({ length: n }, () =>
    body.response_format === 'url'
      ? { url: `https://images.simulator.invalid/${token(16)}.png`, revised_prompt: revised }
      : { b64_json: PNG_BASE64, revised_prompt: revised },
  );
  sendJson(call.response, 200, {
    created: Math.floor(Date.now() / 1000),
    data,
    usage: {
      input_tokens: Math.ceil(body.prompt.length / 4),
      input_tokens_details: { text_tokens: Math.ceil(body.prompt.length / 4), image_tokens: 0 },
      output_tokens: 1056 * n,
      total_tokens: Math.ceil(body.prompt.length / 4) + 1056 * n,
    },
  });
}

function moderations(call: SimCall) {
  if (behaviourError(call)) return;
  const body = call.body;
  if (!isRecord(body) || body.input === undefined)
    return sendError(call.response, 400, "Missing required parameter: 'input'.", 'input');
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  const texts = inputs.map((item) =>
    typeof item === 'string' ? item : isRecord(item) && typeof item.text === 'string' ? item.text : '',
  );
  const results = texts.map((text) => {
    const flagged = text.includes('flag-me');
    const categories = Object.fromEntries(
      CATEGORIES.map((category) => [category, flagged && category === 'harassment']),
    );
    const scores = Object.fromEntries(
      CATEGORIES.map((category) => [category, flagged && category === 'harassment' ? 0.97 : 0.0001]),
    );
    const applied = Object.fromEntries(CATEGORIES.map((category) => [category, ['text']]));
    return { flagged, categories, category_scores: scores, category_applied_input_types: applied };
  });
  sendJson(call.response, 200, {
    id: `modr-${token(24)}`,
    model: typeof body.model === 'string' ? body.model : 'omni-moderation-latest',
    results,
  });
}
