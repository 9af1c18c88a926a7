/**
 * isoTime keeps the last instants it formatted (lib/clock.ts): whatever order instants come in,
 * including instants that share a cache slot, it must give exactly what `toISOString` gives.
 */
import { describe, expect, it } from 'vitest';
import { isoTime } from './clock.js';

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
