/**
 * The chat-completions wire's embeddings endpoint, simulated (any path prefix):
 *   POST {prefix}/embeddings (JSON: model, input, encoding_format, dimensions, user)
 *     -> {object: "list", data: [{object: "embedding", index, embedding}], model,
 *         usage: {prompt_tokens, total_tokens}}
 * Deterministic: each input's vector is derived from a hash of the model and the input, has
 * `dimensions` components (default 1536; 3072 for models named *-large) and unit length; values are
 * float32 so `float` and `base64` (little-endian float32, as the vendor encodes it) carry the same
 * numbers. Usage: a string counts ceil(UTF-8 bytes / 4) tokens (at least 1), a token array its length;
 * behaviour `usage.input_tokens` reports that count instead. Errors as the vendor words them.
 */
import { createHash } from 'node:crypto';
import { sendJson } from '../http-io.js';
import type { SimCall, SimWire } from '../types.js';
import { behaviourError, sendError } from './chat-resources.js';

export const chatEmbeddingsWire: SimWire = {
  name: 'chat-embeddings',
  routes: [{ method: 'POST', pattern: /^(?<prefix>.*)\/embeddings$/, handle: embeddings }],
};

type Item = string | number[];

function itemsOf(input: unknown): Item[] | undefined {
  if (typeof input === 'string') return input === '' ? undefined : [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((item) => typeof item === 'number' && Number.isInteger(item))) return [input as number[]];
  if (input.every((item) => typeof item === 'string' && item !== '')) return input as string[];
  if (input.every((item) => Array.isArray(item) && item.length > 0 && item.every(Number.isInteger)))
    return input as number[][];
  return undefined;
}

function tokensOf(item: Item): number {
  return typeof item === 'string' ? Math.max(1, Math.ceil(Buffer.byteLength(item, 'utf8') / 4)) : item.length;
}

/** A deterministic unit vector of float32 values for this model and input. */
export function simulatedVector(model: string, item: Item, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const seed = `${model}\u0000${typeof item === 'string' ? item : item.join(',')}`;
  let block = Buffer.alloc(0);
  for (let index = 0; index < dimensions; index += 1) {
    const offset = (index % 16) * 2;
    if (offset === 0) block = createHash('sha256').update(`${seed}\u0000${index}`).digest();
    vector[index] = block.readUInt16LE(offset) / 32767.5 - 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1;
  for (let index = 0; index < dimensions; index += 1) vector[index] = vector[index]! / norm;
  return vector;
}

function base64Of(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => {
    bytes.writeFloatLE(value, index * 4);
  });
  return bytes.toString('base64');
}

function embeddings(call: SimCall) {
  if (behaviourError(call)) return;
  const body = call.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || body.input === undefined)
    return sendError(call.response, 400, "Missing required parameter: 'input'.", 'input');
  if (typeof body.model !== 'string' || body.model === '')
    return sendError(call.response, 400, 'You must provide a model parameter.', 'model');
  const model = body.model;
  const items = itemsOf(body.input);
  if (!items) return sendError(call.response, 400, "'$.input' is invalid.", 'input');
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64')
    return sendError(
      call.response,
      400,
      `Invalid value for 'encoding_format': ${String(format)}.`,
      'encoding_format',
    );
  const native = model.endsWith('-large') ? 3072 : 1536;
  const dimensions = body.dimensions ?? native;
  if (
    typeof dimensions !== 'number' ||
    !Number.isInteger(dimensions) ||
    dimensions < 1 ||
    dimensions > native
  )
    return sendError(
      call.response,
      400,
      `Invalid value for 'dimensions': must be from 1 to ${native}.`,
      'dimensions',
    );
  if (body.dimensions !== undefined && model === 'text-embedding-ada-002')
    return sendError(call.response, 400, 'This model does not support specifying dimensions.', 'dimensions');
  const data = items.map((item, index) => {
    const vector = simulatedVector(model, item, dimensions);
    return {
      object: 'embedding',
      index,
      embedding: format === 'base64' ? base64Of(vector) : Array.from(vector),
    };
  });
  const tokens = call.behaviour.usage?.input_tokens ?? items.reduce((sum, item) => sum + tokensOf(item), 0);
  sendJson(call.response, 200, {
    object: 'list',
    data,
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
