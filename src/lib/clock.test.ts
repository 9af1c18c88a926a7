/**
 * isoTime keeps the last instants it formatted (lib/clock.ts): whatever order instants come in,
 * including instants that share a cache slot, it must give exactly what `toISOString` gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIsoTime, isoTime } from './clock.js';

describe('isoTime', () => {
  it('formats every instant as toISOString does, in any order, slots shared or not', () => {
    const base = Date.parse('2026-11-27T05:00:00.000Z');
    // Instants 8 ms apart share a slot; repeats, neighbours and far instants interleave.
    const instants = [
      base,
      base + 8,
      base,
      base + 1,
      base + 8,
      base + 16,
      base + 1,
      base + 1000 * 3600,
      base,
      0,
      -1,
      -8,
      base + 0.5,
      base,
      8.64e15,
    ];
    for (let round = 0; round < 3; round++)
      for (const instant of instants) expect(isoTime(instant)).toBe(new Date(instant).toISOString());
  });

  it('refuses an instant Date cannot format, as toISOString does, and stays correct after', () => {
    const base = Date.parse('2026-11-27T05:00:00.000Z');
    expect(isoTime(base)).toBe('2026-11-27T05:00:00.000Z');
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 8)).toThrow(RangeError);
    expect(isoTime(base)).toBe('2026-11-27T05:00:00.000Z');
    expect(isoTime(base + 8)).toBe('2026-11-27T05:00:00.008Z');
  });
});

describe('formatIsoTime', () => {
  const reference = (instant: number) => new Date(instant).toISOString();

  it('writes what toISOString writes for any instant from 1970 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (instant) => {
        expect(formatIsoTime(instant)).toBe(reference(instant));
      }),
      { numRuns: 20_000 },
    );
  });

  it('gets the calendar edges right: leap days, century years, the first and last instants', () => {
    const edges = [
      '1970-01-01T00:00:00.000Z',
      '1972-02-29T23:59:59.999Z',
      '1999-12-31T23:59:59.999Z',
      '2000-02-29T12:00:00.000Z',
      '2000-03-01T00:00:00.000Z',
      '2100-02-28T23:59:59.999Z',
      '2100-03-01T00:00:00.000Z',
      '2400-02-29T00:00:00.001Z',
      '2026-11-27T09:05:03.010Z',
      '9999-12-31T23:59:59.999Z',
    ];
    for (const text of edges) expect(formatIsoTime(Date.parse(text))).toBe(text);
    for (let day = 0; day < 366 * 4; day++) {
      const instant = Date.parse('2023-01-01T00:00:00.000Z') + day * 86_400_000 + day * 997;
      expect(formatIsoTime(instant)).toBe(reference(instant));
    }
  });

  it('leaves everything else to Date: before 1970, fractions, six-digit years, and what cannot be formatted', () => {
    for (const instant of [
      -1, -86_400_001, -62_198_755_200_000, 0.5, 1_700_000_000_000.75, 253_402_300_800_000, 8.64e15,
    ])
      expect(formatIsoTime(instant)).toBe(reference(instant));
    for (const instant of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1])
      expect(() => formatIsoTime(instant)).toThrow(RangeError);
  });
});
