/**
 * Pure pricing. Money is integer micro-USD; prices are micro-USD per million tokens.
 *
 * worst case = request fee + ceil((inputBound x max(input, cache write, cache read price)
 *                                  + max_tokens x output price) / 1e6)
 * actual     = request fee + ceil((input x input price + cache write x cache write price
 *                                  + cache read x cache read price + output x output price) / 1e6)
 *
 * With input + cache write + cache read <= inputBound and output <= max_tokens, actual <= worst
 * case for every usage (property-tested in pricing.test.ts). BigInt keeps the products exact.
 */

export interface Price {
  inputPerMtok: number;
  outputPerMtok: number;
  cacheWritePerMtok: number;
  cacheReadPerMtok: number;
  requestFee: number;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

const MILLION = 1_000_000n;

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

function toSafeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  return Number(value);
}

export function worstCaseCost(price: Price, inputBoundTokens: number, maxOutputTokens: number): number {
  const inputPrice = Math.max(price.inputPerMtok, price.cacheWritePerMtok, price.cacheReadPerMtok);
  const tokens =
    BigInt(inputBoundTokens) * BigInt(inputPrice) + BigInt(maxOutputTokens) * BigInt(price.outputPerMtok);
  return toSafeNumber(BigInt(price.requestFee) + ceilDivide(tokens, MILLION));
}

export function actualCost(price: Price, usage: TokenUsage): number {
  const tokens =
    BigInt(usage.inputTokens) * BigInt(price.inputPerMtok) +
    BigInt(usage.cacheCreationInputTokens) * BigInt(price.cacheWritePerMtok) +
    BigInt(usage.cacheReadInputTokens) * BigInt(price.cacheReadPerMtok) +
    BigInt(usage.outputTokens) * BigInt(price.outputPerMtok);
  return toSafeNumber(BigInt(price.requestFee) + ceilDivide(tokens, MILLION));
}

export interface InputBoundFacts {
  /** Bytes of the request body as received. */
  bodyBytes: number;
  /** Bytes of embedded image/document data inside the body (replaced by the per-item bounds). */
  embeddedDataBytes: number;
  images: number;
  documents: number;
}

export interface InputBoundSettings {
  imageTokens: number;
  documentTokens: number;
}

/**
 * Upper bound of the input tokens of a request: a token is at least one byte of the text it
 * encodes, and the JSON body holds every byte of text plus more structure than any chat template
 * adds, so the body's byte count bounds the text part. Embedded images and documents are priced by
 * their configured per-item bound instead of their base64 size.
 */
export function inputTokenBound(facts: InputBoundFacts, settings: InputBoundSettings): number {
  const textBytes = Math.max(0, facts.bodyBytes - facts.embeddedDataBytes);
  return textBytes + facts.images * settings.imageTokens + facts.documents * settings.documentTokens;
}

export function priceFromConfig(price: {
  input_per_mtok_micros: number;
  output_per_mtok_micros: number;
  cache_write_per_mtok_micros: number;
  cache_read_per_mtok_micros: number;
  request_fee_micros: number;
}): Price {
  return {
    inputPerMtok: price.input_per_mtok_micros,
    outputPerMtok: price.output_per_mtok_micros,
    cacheWritePerMtok: price.cache_write_per_mtok_micros,
    cacheReadPerMtok: price.cache_read_per_mtok_micros,
    requestFee: price.request_fee_micros,
  };
}
