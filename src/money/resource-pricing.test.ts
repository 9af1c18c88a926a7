import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMBEDDING_SPECIAL_TOKENS_PER_INPUT,
  embeddingInputBound,
  embeddingsCostOf,
  type ImagePrice,
  imageUnitPrice,
  moderationCostOf,
  resolveImageChoice,
  settledImageUnitPrice,
  speechCostOf,
  transcriptionCostOf,
  transcriptionReservationOf,
} from './resource-pricing.js';

const IMAGES: ImagePrice = {
  per_image: [
    { size: '1024x1024', quality: 'standard', micros: 40_000 },
    { size: '1024x1024', quality: 'hd', micros: 80_000 },
    { size: '1792x1024', quality: 'standard', micros: 80_000 },
    { size: '1792x1024', quality: 'hd', micros: 120_000 },
  ],
  default_size: '1024x1024',
  default_quality: 'standard',
};

describe('media alias pricing', () => {
  it('prices speech per million code points, rounding up', () => {
    expect(speechCostOf({ per_million_characters_micros: 30_000_000 }, 'héllo 東京')).toBe(8 * 30);
    expect(speechCostOf({ per_million_characters_micros: 1 }, 'a')).toBe(1);
    expect(speechCostOf({ per_million_characters_micros: 0 }, 'abc')).toBe(0);
  });

  it('prices transcriptions per minute or per second, to the millisecond, rounding up', () => {
    expect(transcriptionCostOf({ per_minute_micros: 6_000, max_seconds: 600 }, 30)).toBe(3_000);
    expect(transcriptionCostOf({ per_minute_micros: 6_000, max_seconds: 600 }, 0.0001)).toBe(1);
    expect(transcriptionCostOf({ per_second_micros: 100, max_seconds: 600 }, 12.5)).toBe(1_250);
    expect(transcriptionCostOf({ per_second_micros: 100, max_seconds: 600 }, 0.001)).toBe(1);
    expect(transcriptionReservationOf({ per_second_micros: 100, max_seconds: 600 })).toBe(60_000);
    expect(transcriptionReservationOf({ per_minute_micros: 6_000, max_seconds: 90 })).toBe(9_000);
  });

  it('never reserves less than a transcription up to max_seconds costs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 7200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (micros, perSecond, maxSeconds, fraction) => {
          const price = perSecond
            ? { per_second_micros: micros, max_seconds: maxSeconds }
            : { per_minute_micros: micros, max_seconds: maxSeconds };
          expect(transcriptionCostOf(price, maxSeconds * fraction)).toBeLessThanOrEqual(
            transcriptionReservationOf(price),
          );
        },
      ),
    );
  });

  it('prices an image by size and quality, with the target defaults for what the request omits', () => {
    expect(imageUnitPrice(IMAGES, resolveImageChoice(IMAGES, {}))).toBe(40_000);
    expect(imageUnitPrice(IMAGES, resolveImageChoice(IMAGES, { quality: 'hd' }))).toBe(80_000);
    expect(imageUnitPrice(IMAGES, resolveImageChoice(IMAGES, { size: '1792x1024', quality: 'hd' }))).toBe(
      120_000,
    );
    expect(imageUnitPrice(IMAGES, resolveImageChoice(IMAGES, { size: '512x512' }))).toBeUndefined();
    expect(imageUnitPrice(IMAGES, resolveImageChoice(IMAGES, { quality: 'low' }))).toBeUndefined();
  });

  it('reserves what stays open at the dearest matching row and settles at the reported choice', () => {
    const open: ImagePrice = { per_image: IMAGES.per_image };
    expect(imageUnitPrice(open, resolveImageChoice(open, { size: 'auto', quality: 'auto' }))).toBe(120_000);
    expect(imageUnitPrice(open, resolveImageChoice(open, { size: '1024x1024' }))).toBe(80_000);
    expect(settledImageUnitPrice(open, 120_000, { size: '1024x1024', quality: 'standard' })).toBe(40_000);
    expect(settledImageUnitPrice(open, 120_000, {})).toBe(120_000);
    expect(settledImageUnitPrice(open, 80_000, { size: '9999x9999' })).toBe(80_000);
    expect(settledImageUnitPrice(open, 40_000, { size: '1792x1024', quality: 'hd' })).toBe(40_000);
  });

  it('lets a row without quality price every quality of its size', () => {
    const flat: ImagePrice = { per_image: [{ size: '1024x1024', micros: 20_000 }] };
    expect(imageUnitPrice(flat, resolveImageChoice(flat, { quality: 'hd' }))).toBe(20_000);
    expect(imageUnitPrice(flat, resolveImageChoice(flat, { size: '256x256' }))).toBeUndefined();
  });

  it('prices moderations per request', () => {
    expect(moderationCostOf({ per_request_micros: 100 })).toBe(100);
  });
});

describe('embeddings', () => {
  const extra = EMBEDDING_SPECIAL_TOKENS_PER_INPUT;

  it('bounds strings by UTF-8 bytes and token arrays by length, plus the special tokens of each input', () => {
    expect(embeddingInputBound('東京')).toBe(6 + extra);
    expect(embeddingInputBound(['ab', 'cde'])).toBe(5 + 2 * extra);
    expect(embeddingInputBound([5, 6, 7])).toBe(3 + extra);
    expect(embeddingInputBound([[5, 6], [7]])).toBe(3 + 2 * extra);
  });

  it('bounds a byte-level tokenizer: one token per byte at most (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, unit: 'binary' }), { minLength: 1, maxLength: 8 }),
        (texts) => {
          const worstTokens = texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
          expect(embeddingInputBound(texts)).toBeGreaterThanOrEqual(worstTokens);
        },
      ),
    );
  });

  it('prices input tokens per million, rounded up, plus the request fee', () => {
    expect(embeddingsCostOf({ input_per_mtok_micros: 20_000, request_fee_micros: 0 }, 1)).toBe(1);
    expect(embeddingsCostOf({ input_per_mtok_micros: 20_000, request_fee_micros: 5 }, 100)).toBe(7);
    expect(embeddingsCostOf({ input_per_mtok_micros: 20_000, request_fee_micros: 0 }, 0)).toBe(0);
  });
});
