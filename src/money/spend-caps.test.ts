import { describe, expect, it } from 'vitest';
import {
  capCounters,
  capRefusal,
  dayPeriod,
  monthPeriod,
  projectCapsFrom,
  recordedCounters,
  refusalOrder,
  reservationCounters,
  spendCapsFields,
  spendCapsOf,
} from './spend-caps.js';

describe('spend caps (pure)', () => {
  it('keys UTC windows by their start, whatever the local offset of the instant', () => {
    const lastMsOfNovember = Date.parse('2026-11-30T23:59:59.999Z');
    expect(dayPeriod(lastMsOfNovember)).toBe('2026-11-30');
    expect(monthPeriod(lastMsOfNovember)).toBe('2026-11');
    expect(dayPeriod(lastMsOfNovember + 1)).toBe('2026-12-01');
    expect(monthPeriod(lastMsOfNovember + 1)).toBe('2026-12');
    expect(dayPeriod(Date.parse('2026-11-24T01:00:00+02:00'))).toBe('2026-11-23');
  });

  it('has one counter per cap set, none for absent caps, and a zero cap is a cap', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(capCounters('key', 'key_a', {}, now)).toEqual([]);
    expect(capCounters('key', 'key_a', undefined, now)).toEqual([]);
    expect(capCounters('project', 'prj_a', { lifetimeMicrosUsd: 0, monthMicrosUsd: 7 }, now)).toEqual([
      { scope: 'project', ownerId: 'prj_a', period: 'lifetime', limitMicrosUsd: 0 },
      { scope: 'project', ownerId: 'prj_a', period: '2026-11', limitMicrosUsd: 7 },
    ]);
  });

  it('orders counters Project first, then key, then by period, for every caller alike', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const counters = reservationCounters(
      'prj_z',
      { dayMicrosUsd: 1 },
      'key_a',
      { lifetimeMicrosUsd: 2, dayMicrosUsd: 3 },
      now,
    );
    expect(counters.map((counter) => `${counter.scope}/${counter.period}`)).toEqual([
      'project/2026-11-23',
      'key/2026-11-23',
      'key/lifetime',
    ]);
    expect(refusalOrder([...counters].reverse())).toEqual(counters);
  });

  it('names the limit, its window and what remains in a refusal', () => {
    const refusal = capRefusal(
      { scope: 'key', ownerId: 'key_a', period: '2026-11', limitMicrosUsd: 1000 },
      { committed: 700, reserved: 200 },
      150,
    );
    expect(refusal.code).toBe('key_budget_exceeded');
    expect(refusal.message).toBe(
      'The worst-case cost of this call (150 micro-USD) exceeds the month 2026-11 (UTC) spend cap of Gateway Key key_a: 1000 micro-USD, 100 remaining.',
    );
    const project = capRefusal(
      { scope: 'project', ownerId: 'prj_a', period: 'lifetime', limitMicrosUsd: 10 },
      { committed: 20, reserved: 0 },
      1,
    );
    expect(project.code).toBe('project_budget_exceeded');
    expect(project.message).toContain('lifetime spend cap of Project prj_a: 10 micro-USD, 0 remaining');
  });

  it('converts configuration/API fields both ways and reads recorded counters from text or JSON', () => {
    const fields = { lifetime_micros_usd: 5, month_micros_usd: 9 };
    expect(spendCapsOf(fields)).toEqual({ lifetimeMicrosUsd: 5, monthMicrosUsd: 9 });
    expect(spendCapsFields(spendCapsOf(fields))).toEqual(fields);
    expect(projectCapsFrom([{ id: 'prj_a', caps: { day_micros_usd: 3 } }, { id: 'prj_b' }])('prj_a')).toEqual(
      {
        dayMicrosUsd: 3,
      },
    );
    const keys = [{ scope: 'key', ownerId: 'key_a', period: 'lifetime' }];
    expect(recordedCounters(JSON.stringify(keys))).toEqual(keys);
    expect(recordedCounters(keys)).toEqual(keys);
    expect(recordedCounters(null)).toEqual([]);
  });
});
