/**
 * POST /v1/responses request checks (pure). The body is a responses-wire request; the gateway
 * forwards it with `model` replaced, `background` removed and `store: false`, so it refuses, before
 * any upstream call, what it cannot honour that way:
 * - unknown top-level fields (the responses-wire field list, protocols 3.2);
 * - `stream: true` (no streaming pass-through on this endpoint), `previous_response_id` and
 *   `conversation` (stateful: the upstream keeps nothing), `store: true` (nothing is stored
 *   upstream; use `background: true` for a retrievable response).
 * `max_output_tokens` bounds the reservation: required unless a configured default applies.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { RESPONSES_REQUEST_FIELDS } from '../../primitives/responses/fields.js';

const KNOWN_FIELDS: ReadonlySet<string> = new Set(RESPONSES_REQUEST_FIELDS);

export interface ResponsesCall {
  model: string;
  background: boolean;
  maxOutputTokens: number;
  /** Input items that are images or files (each priced at its configured bound). */
  images: number;
  documents: number;
  /** The client's body, to be forwarded with model replaced and background removed. */
  body: Record<string, unknown>;
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

function countParts(value: unknown, counts: { images: number; documents: number }): void {
  if (Array.isArray(value)) {
    for (const item of value) countParts(item, counts);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  if (record.type === 'input_image') counts.images += 1;
  if (record.type === 'input_file') counts.documents += 1;
  countParts(record.content, counts);
  countParts(record.output, counts);
}

export function checkResponsesRequest(
  body: unknown,
  defaultMaxOutputTokens: number | undefined,
): ResponsesCall {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!KNOWN_FIELDS.has(name)) throw invalid(`${name}: unknown field`, name);
  }
  if (typeof fields.model !== 'string' || fields.model === '')
    throw invalid('model: a model alias is required', 'model');
  if (typeof fields.input !== 'string' && !Array.isArray(fields.input)) {
    throw invalid('input: a string or an array of input items is required', 'input');
  }
  if (fields.stream !== undefined && fields.stream !== null && fields.stream !== false) {
    throw new GatewayError(
      'unsupported_field',
      'stream: streaming is not offered on /v1/responses by this gateway',
      { param: 'stream' },
    );
  }
  for (const stateful of ['previous_response_id', 'conversation'] as const) {
    if (fields[stateful] !== undefined && fields[stateful] !== null) {
      throw new GatewayError(
        'unsupported_field',
        `${stateful}: stateful responses are not offered; send the whole input`,
        {
          param: stateful,
        },
      );
    }
  }
  if (fields.store === true) {
    throw new GatewayError(
      'unsupported_field',
      'store: nothing is stored upstream; use background: true for a retrievable response',
      {
        param: 'store',
      },
    );
  }
  if (
    fields.background !== undefined &&
    fields.background !== null &&
    typeof fields.background !== 'boolean'
  ) {
    throw invalid('background: must be a boolean', 'background');
  }
  const max = fields.max_output_tokens ?? defaultMaxOutputTokens;
  if (max === undefined || max === null) {
    throw invalid('max_output_tokens: required (it bounds the reservation of the call)', 'max_output_tokens');
  }
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw invalid('max_output_tokens: must be a positive integer', 'max_output_tokens');
  }
  const counts = { images: 0, documents: 0 };
  countParts(fields.input, counts);
  return {
    model: fields.model,
    background: fields.background === true,
    maxOutputTokens: max,
    ...counts,
    body: fields,
  };
}

/** The body sent upstream: model replaced, background removed, store false, the output bound explicit. */
export function upstreamBody(call: ResponsesCall, upstreamModel: string): Record<string, unknown> {
  const { background: _background, stream: _stream, ...rest } = call.body;
  return { ...rest, model: upstreamModel, max_output_tokens: call.maxOutputTokens, store: false };
}
