import { describe, expect, it } from 'vitest';
import { newId, newTimeOrderedId, randomBase32, timeOfTimeOrderedId } from './ids.js';

const SHAPE = /^att_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('ids', () => {
  it('newId is a prefix and 26 Crockford base32 characters', () => {
    expect(newId('att')).toMatch(SHAPE);
  });

  it('a time-ordered id has the same shape and sorts by its time', () => {
    const times = [
      0,
      1,
      31,
      32,
      1_000,
      Date.parse('2026-11-23T15:00:00Z'),
      Date.parse('2100-01-01T00:00:00Z'),
    ];
    const ids = times.map((time) => newTimeOrderedId('att', time));
    for (const id of ids) expect(id).toMatch(SHAPE);
    expect([...ids].sort()).toEqual(ids);
  });

  it('ids of the same millisecond share the time and differ in the random part', () => {
    const now = Date.parse('2026-11-23T15:00:00.123Z');
    const ids = new Set(Array.from({ length: 1000 }, () => newTimeOrderedId('att', now)));
    expect(ids.size).toBe(1000);
    expect(new Set([...ids].map((id) => id.slice(0, 14))).size).toBe(1);
  });

  it('the time part is the instant in base32, whatever length of random text came before', () => {
    expect(randomBase32(100)).toMatch(/^[0-9A-HJKMNP-TV-Z]{100}$/);
    expect(newTimeOrderedId('att', 0).slice(0, 14)).toBe('att_0000000000');
    expect(newTimeOrderedId('att', 32 * 32 + 31).slice(0, 14)).toBe('att_000000010Z');
    expect(randomBase32(3)).toMatch(/^[0-9A-HJKMNP-TV-Z]{3}$/);
    // Every character of the alphabet comes out (the random part is uniform over all 32).
    const seen = new Set(randomBase32(4000));
    expect(seen.size).toBe(32);
  });

  it('timeOfTimeOrderedId reads back the creation time, and nothing from other shapes', () => {
    for (const time of [0, 1, Date.parse('2026-11-28T04:08:32.123Z'), Date.parse('2100-01-01T00:00:00Z')])
      expect(timeOfTimeOrderedId(newTimeOrderedId('att', time))).toBe(time);
    expect(timeOfTimeOrderedId('att_short')).toBeUndefined();
    expect(timeOfTimeOrderedId('att_0000000000000000000000000U')).toBeUndefined();
    expect(timeOfTimeOrderedId('att_000000000000000000000000001')).toBeUndefined();
    expect(timeOfTimeOrderedId('nounderscore_at_all_here_xx')).toBeUndefined();
  });
});
