/**
 * Inbound request shapes of the media endpoints (SPEC.md 4.4 field lists), strict: unknown fields
 * are refused by name before any upstream call, and images refuse `user` (end-user identifiers are
 * not forwarded). Transcription fields arrive as multipart text and are checked here too.
 */
import { type Static, Type as T } from '@sinclair/typebox';
import { GatewayError } from '../../errors/gateway-error.js';
import { validateBody } from '../../governance/validate.js';

const Text = T.String({ minLength: 1 });

export const SpeechBody = T.Object(
  {
    model: Text,
    input: T.String({ minLength: 1, maxLength: 4096 }),
    voice: T.Union([Text, T.Object({ id: Text }, { additionalProperties: false })]),
    response_format: T.Optional(
      T.Union(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'].map((format) => T.Literal(format))),
    ),
    speed: T.Optional(T.Number({ minimum: 0.25, maximum: 4 })),
  },
  { additionalProperties: false },
);
export type SpeechRequest = Static<typeof SpeechBody>;

export const ImagesBody = T.Object(
  {
    prompt: Text,
    model: T.Optional(Text),
    n: T.Optional(T.Integer({ minimum: 1, maximum: 10 })),
    quality: T.Optional(
      T.Union(['standard', 'hd', 'low', 'medium', 'high', 'auto'].map((quality) => T.Literal(quality))),
    ),
    response_format: T.Optional(T.Union([T.Literal('url'), T.Literal('b64_json')])),
    size: T.Optional(T.String({ pattern: '^(auto|[1-9][0-9]{1,4}x[1-9][0-9]{1,4})$' })),
    style: T.Optional(T.Union([T.Literal('vivid'), T.Literal('natural')])),
  },
  { additionalProperties: false },
);
export type ImagesRequest = Static<typeof ImagesBody>;

const ModerationPart = T.Union([
  T.Object({ type: T.Literal('text'), text: T.String() }, { additionalProperties: false }),
  T.Object(
    { type: T.Literal('image_url'), image_url: T.Object({ url: Text }, { additionalProperties: false }) },
    { additionalProperties: false },
  ),
]);

export const ModerationBody = T.Object(
  {
    input: T.Union([
      T.String(),
      T.Array(T.String(), { minItems: 1 }),
      T.Array(ModerationPart, { minItems: 1 }),
    ]),
    model: T.Optional(Text),
  },
  { additionalProperties: false },
);
export type ModerationRequest = Static<typeof ModerationBody>;

export function checkSpeech(body: unknown): SpeechRequest {
  return validateBody(SpeechBody, body);
}

export function checkImages(body: unknown): ImagesRequest {
  if (typeof body === 'object' && body !== null && 'user' in body) {
    throw new GatewayError(
      'unsupported_field',
      'user: not accepted on images (end-user identifiers are not forwarded upstream)',
      {
        param: 'user',
      },
    );
  }
  return validateBody(ImagesBody, body);
}

export function checkModeration(body: unknown): ModerationRequest {
  return validateBody(ModerationBody, body);
}

// ---- transcriptions (multipart text fields) ----------------------------------------------------

export const TRANSCRIPTION_FIELDS = [
  'model',
  'language',
  'prompt',
  'response_format',
  'temperature',
] as const;
export type TranscriptionField = (typeof TRANSCRIPTION_FIELDS)[number];
export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;

export interface TranscriptionRequest {
  fields: Array<readonly [TranscriptionField, string]>;
  model: string;
  responseFormat: (typeof TRANSCRIPTION_FORMATS)[number];
}

export function isTranscriptionField(name: string): name is TranscriptionField {
  return (TRANSCRIPTION_FIELDS as readonly string[]).includes(name);
}

function invalid(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${field}: ${message}`, { param: field });
}

export function checkTranscription(values: ReadonlyMap<TranscriptionField, string>): TranscriptionRequest {
  const model = values.get('model');
  if (model === undefined || model === '') throw invalid('model', 'required');
  const language = values.get('language');
  if (language !== undefined && !/^[a-z]{2,3}$/.test(language))
    throw invalid('language', 'must be an ISO-639-1 code such as en');
  const format = values.get('response_format') ?? 'json';
  if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format)) {
    throw invalid('response_format', `must be one of ${TRANSCRIPTION_FORMATS.join(', ')}`);
  }
  const temperature = values.get('temperature');
  if (temperature !== undefined) {
    const value = Number(temperature);
    if (temperature.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1)
      throw invalid('temperature', 'must be a number from 0 to 1');
  }
  return {
    fields: TRANSCRIPTION_FIELDS.flatMap((field) => {
      const value = values.get(field);
      return value === undefined ? [] : [[field, value] as const];
    }),
    model,
    responseFormat: format as TranscriptionRequest['responseFormat'],
  };
}

// ---- embeddings -----------------------------------------------------------------------------------

/** The most inputs one embeddings request may carry (the vendorb limit). */
export const MAX_EMBEDDING_INPUTS = 2048;

export const EmbeddingsBody = T.Object(
  {
    model: Text,
    /** Checked by checkEmbeddingsInput, which names what is wrong with it. */
    input: T.Unknown(),
    encoding_format: T.Optional(T.Union([T.Literal('float'), T.Literal('base64')])),
    dimensions: T.Optional(T.Integer({ minimum: 1 })),
    user: T.Optional(T.String()),
  },
  { additionalProperties: false },
);

export type EmbeddingsInput = string | string[] | number[] | number[][];
export type EmbeddingsRequest = Omit<Static<typeof EmbeddingsBody>, 'input'> & { input: EmbeddingsInput };

const isToken = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;

/** A string, an array of strings, an array of tokens or an array of token arrays; nothing empty. */
function checkEmbeddingsInput(input: unknown): EmbeddingsInput {
  const wrong = (message: string) => invalid('input', message);
  if (typeof input === 'string') {
    if (input === '') throw wrong('must not be an empty string');
    return input;
  }
  if (!Array.isArray(input))
    throw wrong('must be a string, an array of strings, an array of tokens or an array of token arrays');
  if (input.length === 0) throw wrong('must not be an empty array');
  if (input.length > MAX_EMBEDDING_INPUTS)
    throw wrong(`at most ${MAX_EMBEDDING_INPUTS} inputs per request (got ${input.length})`);
  if (typeof input[0] === 'string') {
    const bad = input.findIndex((item) => typeof item !== 'string' || item === '');
    if (bad >= 0) throw wrong(`item ${bad}: every item of an array of strings must be a non-empty string`);
    return input as string[];
  }
  if (typeof input[0] === 'number') {
    const bad = input.findIndex((item) => !isToken(item));
    if (bad >= 0) throw wrong(`item ${bad}: every item of a token array must be a non-negative integer`);
    return input as number[];
  }
  input.forEach((item, index) => {
    if (!Array.isArray(item) || item.length === 0 || !item.every(isToken))
      throw wrong(
        `item ${index}: every item of an array of token arrays must be a non-empty array of non-negative integers`,
      );
  });
  return input as number[][];
}

export function checkEmbeddings(body: unknown): EmbeddingsRequest {
  const request = validateBody(EmbeddingsBody, body);
  return { ...request, input: checkEmbeddingsInput(request.input) };
}
