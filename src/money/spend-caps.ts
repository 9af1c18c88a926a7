/**
 * Spend caps beyond Runs (DESIGN.md section 4, "Caps beyond Runs"): a Project (configuration) and
 * a Gateway Key (keys API) may each cap their spend over their lifetime and over calendar windows
 * in UTC. Pure: which counters a reservation must fit, how windows are keyed, and how a refusal
 * names its limit. The store adapters apply the counters conditionally in the reservation's own
 * transaction.
 *
 * - A window is keyed by its start: a day `2026-11-23`, a month `2026-11`; the lifetime counter is
 *   `lifetime`. Windows are UTC calendar days and months.
 * - An attempt counts in the windows of the instant it was RESERVED: the counters it reserved on are
 *   recorded with it, and its settlement commits/releases on exactly those, even after the window
 *   rolled over (so a day's total is the spend of the calls admitted that day).
 * - Only caps that are set have counters; a cap added later counts spend from then on.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { isoTime } from '../lib/clock.js';

export interface SpendCaps {
  lifetimeMicrosUsd?: number;
  dayMicrosUsd?: number;
  monthMicrosUsd?: number;
}

export type CapScope = 'project' | 'key';
export type CapWindow = 'lifetime' | 'day' | 'month';

/** One counter row: (scope, owner, period) with the limit it must stay within. */
export interface CapCounter {
  scope: CapScope;
  ownerId: string;
  /** `lifetime`, a UTC day `YYYY-MM-DD` or a UTC month `YYYY-MM`. */
  period: string;
  limitMicrosUsd: number;
}

/** The counter a settlement touches (the limit is irrelevant once admitted). */
export type CounterKey = Pick<CapCounter, 'scope' | 'ownerId' | 'period'>;

export function dayPeriod(nowMs: number): string {
  return isoTime(nowMs).slice(0, 10);
}

export function monthPeriod(nowMs: number): string {
  return isoTime(nowMs).slice(0, 7);
}

export function periodOf(window: CapWindow, nowMs: number): string {
  switch (window) {
    case 'lifetime':
      return 'lifetime';
    case 'day':
      return dayPeriod(nowMs);
    case 'month':
      return monthPeriod(nowMs);
    default: {
      const never: never = window;
      throw new Error(`unknown cap window ${String(never)}`);
    }
  }
}

function limitOf(caps: SpendCaps, window: CapWindow): number | undefined {
  switch (window) {
    case 'lifetime':
      return caps.lifetimeMicrosUsd;
    case 'day':
      return caps.dayMicrosUsd;
    case 'month':
      return caps.monthMicrosUsd;
    default: {
      const never: never = window;
      throw new Error(`unknown cap window ${String(never)}`);
    }
  }
}

const WINDOWS: readonly CapWindow[] = ['lifetime', 'day', 'month'];

/** The counters of one owner's caps at `nowMs` (none when no cap is set). */
export function capCounters(
  scope: CapScope,
  ownerId: string,
  caps: SpendCaps | null | undefined,
  nowMs: number,
): CapCounter[] {
  const counters: CapCounter[] = [];
  if (!caps) return counters;
  for (const window of WINDOWS) {
    const limit = limitOf(caps, window);
    if (limit !== undefined)
      counters.push({ scope, ownerId, period: periodOf(window, nowMs), limitMicrosUsd: limit });
  }
  return counters;
}

/**
 * The order in which a reservation's counters are checked, hence which one a refusal names when
 * several refuse: Project before key, then by period. (Locking order is store/cap-tally.ts's.)
 */
export function refusalOrder<T extends CounterKey>(counters: readonly T[]): T[] {
  const rank = (counter: CounterKey) =>
    `${counter.scope === 'project' ? 0 : 1}/${counter.ownerId}/${counter.period}`;
  return [...counters].sort((left, right) =>
    rank(left) < rank(right) ? -1 : rank(left) > rank(right) ? 1 : 0,
  );
}

function windowName(period: string): string {
  if (period === 'lifetime') return 'lifetime';
  return period.length === 10 ? `day ${period} (UTC)` : `month ${period} (UTC)`;
}

/** The refusal of a reservation that does not fit `counter` (committed and reserved as they are now). */
export function capRefusal(
  counter: CapCounter,
  usage: { committed: number; reserved: number },
  amountMicrosUsd: number,
): GatewayError {
  const remaining = Math.max(0, counter.limitMicrosUsd - usage.committed - usage.reserved);
  const owner = counter.scope === 'project' ? `Project ${counter.ownerId}` : `Gateway Key ${counter.ownerId}`;
  return new GatewayError(
    counter.scope === 'project' ? 'project_budget_exceeded' : 'key_budget_exceeded',
    `The worst-case cost of this call (${amountMicrosUsd} micro-USD) exceeds the ${windowName(counter.period)} spend cap of ${owner}: ${counter.limitMicrosUsd} micro-USD, ${remaining} remaining.`,
  );
}

/** Caps as configuration and the keys API spell them (snake case, micro-USD). */
export interface SpendCapsFields {
  lifetime_micros_usd?: number;
  day_micros_usd?: number;
  month_micros_usd?: number;
}

export function spendCapsOf(fields: SpendCapsFields | undefined): SpendCaps {
  if (!fields) return {};
  return {
    ...(fields.lifetime_micros_usd === undefined ? {} : { lifetimeMicrosUsd: fields.lifetime_micros_usd }),
    ...(fields.day_micros_usd === undefined ? {} : { dayMicrosUsd: fields.day_micros_usd }),
    ...(fields.month_micros_usd === undefined ? {} : { monthMicrosUsd: fields.month_micros_usd }),
  };
}

export function spendCapsFields(caps: SpendCaps): SpendCapsFields {
  return {
    ...(caps.lifetimeMicrosUsd === undefined ? {} : { lifetime_micros_usd: caps.lifetimeMicrosUsd }),
    ...(caps.dayMicrosUsd === undefined ? {} : { day_micros_usd: caps.dayMicrosUsd }),
    ...(caps.monthMicrosUsd === undefined ? {} : { month_micros_usd: caps.monthMicrosUsd }),
  };
}

/** Every counter a reservation at `nowMs` must fit, in refusal order (Project caps, then key caps). */
export function reservationCounters(
  projectId: string,
  projectCaps: SpendCaps | undefined,
  keyId: string,
  keyCaps: SpendCaps | undefined,
  nowMs: number,
): CapCounter[] {
  return refusalOrder([
    ...capCounters('project', projectId, projectCaps, nowMs),
    ...capCounters('key', keyId, keyCaps, nowMs),
  ]);
}

/** The counters recorded on an attempt (`attempts.cap_counters`: JSON text, JSONB or NULL). */
export function recordedCounters(value: unknown): CounterKey[] {
  if (value === null || value === undefined) return [];
  const parsed = (typeof value === 'string' ? JSON.parse(value) : value) as CounterKey[];
  return parsed.map((counter) => ({
    scope: counter.scope,
    ownerId: counter.ownerId,
    period: counter.period,
  }));
}

/** What an attempt records: the counters without their limits. */
export function counterKeys(counters: readonly CapCounter[]): CounterKey[] {
  return counters.map((counter) => ({
    scope: counter.scope,
    ownerId: counter.ownerId,
    period: counter.period,
  }));
}

/** The Project caps of a configuration, by Project id (what the ledger passes with each reservation). */
export function projectCapsFrom(projects: ReadonlyArray<{ id: string; caps?: SpendCapsFields }>) {
  const caps = new Map(projects.map((project) => [project.id, spendCapsOf(project.caps)]));
  return (projectId: string): SpendCaps | undefined => caps.get(projectId);
}
