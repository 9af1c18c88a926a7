import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actualCost, inputTokenBound, type Price, worstCaseCost } from './pricing.js';

const price: Price = {
  inputPerMtok: 3_000_000,
  outputPerMtok: 15_000_000,
  cacheWritePerMtok: 3_750_000,
  cacheReadPerMtok: 300_000,
  requestFee: 0,
};

describe('pricing', () => {
  it('prices tokens in micro-USD per million, rounding up', () => {
    expect(
      actualCost(price, {
        inputTokens: 1000,
        outputTokens: 100,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      }),
    ).toBe(4500);
    expect(
      actualCost(price, {
        inputTokens: 1,
        outputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      }),
    ).toBe(3);
    expect(
      actualCost(
        { ...price, inputPerMtok: 1 },
        { inputTokens: 1, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      ),
    ).toBe(1);
    expect(
      actualCost(
        { ...price, requestFee: 250 },
        { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      ),
    ).toBe(250);
  });

  it('prices the worst case at the highest input-side price', () => {
    expect(worstCaseCost(price, 1000, 100)).toBe(Math.ceil((1000 * 3_750_000 + 100 * 15_000_000) / 1e6));
  });

  it('bounds input by body bytes, replacing embedded data by per-item bounds', () => {
    expect(
      inputTokenBound(
        { bodyBytes: 10_000, embeddedDataBytes: 8000, images: 2, documents: 1 },
        { imageTokens: 100, documentTokens: 1000 },
      ),
    ).toBe(3200);
  });

  it('never prices actual usage above the worst case when usage stays within the bounds', () => {
    const priceArbitrary = fc.record({
      inputPerMtok: fc.integer({ min: 0, max: 100_000_000 }),
      outputPerMtok: fc.integer({ min: 0, max: 200_000_000 }),
      cacheWritePerMtok: fc.integer({ min: 0, max: 150_000_000 }),
      cacheReadPerMtok: fc.integer({ min: 0, max: 50_000_000 }),
      requestFee: fc.integer({ min: 0, max: 1_000_000 }),
    });
    fc.assert(
      fc.property(
        priceArbitrary,
        fc.integer({ min: 0, max: 5_000_000 }),
        fc.integer({ min: 1, max: 500_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (anyPrice, inputBound, maxTokens, inputShare, cacheShare, outputShare) => {
          const input = Math.floor(inputBound * inputShare);
          const cacheWrite = Math.floor((inputBound - input) * cacheShare);
          const cacheRead = inputBound - input - cacheWrite;
          const output = Math.floor(maxTokens * outputShare);
          const usage = {
            inputTokens: input,
            outputTokens: output,
            cacheCreationInputTokens: cacheWrite,
            cacheReadInputTokens: cacheRead,
          };
          expect(actualCost(anyPrice, usage)).toBeLessThanOrEqual(
            worstCaseCost(anyPrice, inputBound, maxTokens),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});
