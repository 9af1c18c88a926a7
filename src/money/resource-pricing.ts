/**
 * Pure pricing of the media endpoints (integer micro-USD, exact with BigInt):
 *   speech         ceil(characters x price per million characters / 1e6); known before the call,
 *                  so the reservation is the cost.
 *   transcription  ceil(seconds x price per minute / 60), seconds rounded up to the millisecond.
 *                  The duration is unknown until the upstream answers, so the reservation is the
 *                  cost of the connection's transcription_max_seconds (a configured bound); a
 *                  longer reported duration is still committed in full (the ledger records truth)
 *                  and flagged as an overrun.
 *   images         images x price per image; the reservation uses n (default 1).
 *   moderations    one fixed price per request.
 */
/**
 * The prices as the configuration writes them (config/schema.ts, one per media target), stated
 * here structurally so money/ depends on no configuration code.
 */
export interface SpeechPrice {
  per_million_characters_micros: number;
}

export interface TranscriptionPrice {
  per_minute_micros?: number | undefined;
  per_second_micros?: number | undefined;
  max_seconds: number;
}

export interface ImagePrice {
  per_image: ReadonlyArray<{ size: string; quality?: string | undefined; micros: number }>;
  default_size?: string | undefined;
  default_quality?: string | undefined;
}

export interface ModerationPrice {
  per_request_micros: number;
}

export interface EmbeddingsPrice {
  input_per_mtok_micros: number;
  request_fee_micros: number;
}

function ceilDivide(numerator: bigint, denominator: bigint): number {
  return Number((numerator + denominator - 1n) / denominator);
}

/** Characters as the upstream counts them: Unicode code points. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export function speechCost(characters: number, perMillionCharacters: number): number {
  return ceilDivide(BigInt(characters) * BigInt(perMillionCharacters), 1_000_000n);
}

export function transcriptionCost(seconds: number, perMinute: number): number {
  const milliseconds = BigInt(Math.ceil(seconds * 1000));
  return ceilDivide(milliseconds * BigInt(perMinute), 60_000n);
}

export function imagesCost(images: number, perImage: number): number {
  return images * perImage;
}

// ---- media alias targets (issue 15): each upstream model carries its own prices ----------------
//   speech         per million characters (as above); known before the call: reservation = cost.
//   transcription  per minute or per second of audio, to the millisecond, rounded up; reserved at
//                  the target's max_seconds.
//   images         per image, by size and quality: the row of the size and quality the request
//                  resolves to (its own, else the target's defaults); what stays open ('auto' or
//                  omitted without a default) is reserved at the dearest matching row and settled
//                  at the size and quality the upstream reports, if it reports a priced one.
//   moderations    per request.
//   embeddings     request fee + ceil(input tokens x price per million / 1e6); reserved at the input
//                  bound (embeddingInputBound), settled at the usage the upstream reports.

export function speechCostOf(price: SpeechPrice, input: string): number {
  return speechCost(characterCount(input), price.per_million_characters_micros);
}

export function transcriptionCostOf(price: TranscriptionPrice, seconds: number): number {
  if (price.per_second_micros !== undefined) {
    const milliseconds = BigInt(Math.ceil(seconds * 1000));
    return ceilDivide(milliseconds * BigInt(price.per_second_micros), 1000n);
  }
  return transcriptionCost(seconds, price.per_minute_micros ?? 0);
}

export function transcriptionReservationOf(price: TranscriptionPrice): number {
  return transcriptionCostOf(price, price.max_seconds);
}

export interface ImageChoice {
  size?: string | undefined;
  quality?: string | undefined;
}

/** The concrete size and quality a request asks for; 'auto' and omitted fall back to the defaults. */
export function resolveImageChoice(price: ImagePrice, requested: ImageChoice): ImageChoice {
  const concrete = (value: string | undefined) =>
    value === undefined || value === 'auto' ? undefined : value;
  return {
    size: concrete(requested.size) ?? price.default_size,
    quality: concrete(requested.quality) ?? price.default_quality,
  };
}

/** Price of one image of this choice (the dearest matching row), or undefined when none is priced. */
export function imageUnitPrice(price: ImagePrice, choice: ImageChoice): number | undefined {
  const rows = price.per_image.filter(
    (row) =>
      (choice.size === undefined || row.size === choice.size) &&
      (choice.quality === undefined || row.quality === undefined || row.quality === choice.quality),
  );
  return rows.length === 0 ? undefined : Math.max(...rows.map((row) => row.micros));
}

/**
 * Settlement price of one image: the reported size and quality when they are priced (never above
 * the reserved unit), else the reserved unit.
 */
export function settledImageUnitPrice(
  price: ImagePrice,
  reservedUnit: number,
  reported: ImageChoice,
): number {
  if (reported.size === undefined && reported.quality === undefined) return reservedUnit;
  const unit = imageUnitPrice(price, resolveImageChoice(price, reported));
  return unit === undefined ? reservedUnit : Math.min(unit, reservedUnit);
}

export function moderationCostOf(price: ModerationPrice): number {
  return price.per_request_micros;
}

/**
 * Per input of an embeddings request, the special tokens a model may add around it (BOS/EOS,
 * [CLS]/[SEP]): tokens that encode no byte of the text, so the byte count alone would not bound them.
 */
export const EMBEDDING_SPECIAL_TOKENS_PER_INPUT = 2;

/**
 * Upper bound of the input tokens of an embeddings request. A text token encodes at least one byte
 * of UTF-8 (byte-level BPE; a byte-fallback tokenizer splits the rest into single bytes), so a
 * string costs at most its UTF-8 byte count; a token array is counted as it is. Each input adds
 * EMBEDDING_SPECIAL_TOKENS_PER_INPUT.
 */
export function embeddingInputBound(
  input: string | readonly string[] | readonly number[] | readonly number[][],
): number {
  // One input: a string or a token array; several: an array of strings or of token arrays.
  const inputs: ReadonlyArray<string | readonly number[]> =
    typeof input === 'string' || typeof input[0] === 'number'
      ? [input as string | readonly number[]]
      : (input as ReadonlyArray<string | readonly number[]>);
  return inputs.reduce(
    (sum, item) =>
      sum +
      (typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.length) +
      EMBEDDING_SPECIAL_TOKENS_PER_INPUT,
    0,
  );
}

export function embeddingsCostOf(price: EmbeddingsPrice, inputTokens: number): number {
  return (
    price.request_fee_micros +
    ceilDivide(BigInt(inputTokens) * BigInt(price.input_per_mtok_micros), 1_000_000n)
  );
}
