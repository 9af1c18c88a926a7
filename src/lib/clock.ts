/** Time is injected everywhere it matters, so expiry, leases and reaping are testable. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can move by hand. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.parse('2026-01-01T00:00:00.000Z')) {}
  now(): number {
    return this.current;
  }
  advance(milliseconds: number): void {
    this.current += milliseconds;
  }
  set(milliseconds: number): void {
    this.current = milliseconds;
  }
}

/**
 * The last instants formatted, by the instant's low bits: a call formats the same few instants
 * several times (its reservation, lease, settlement, log line), and calls in flight together share
 * their milliseconds, so most lookups hit.
 */
const FORMATTED_SLOTS = 8;
const formattedAt = new Float64Array(FORMATTED_SLOTS).fill(Number.NaN);
const formatted: string[] = new Array<string>(FORMATTED_SLOTS).fill('');

/** RFC 3339 UTC with milliseconds, the format of every /svc/v1 time: what `toISOString` writes. */
export function isoTime(milliseconds: number): string {
  const slot = milliseconds & (FORMATTED_SLOTS - 1);
  if (formattedAt[slot] === milliseconds) return formatted[slot]!;
  const text = formatIsoTime(milliseconds);
  formattedAt[slot] = milliseconds;
  formatted[slot] = text;
  return text;
}

const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00.000Z: from there on `toISOString` writes a six-digit year. */
const YEAR_10000_MS = 253_402_300_800_000;

/** The date part (`YYYY-MM-DDT`) of the last day formatted: instants come in days at a time. */
let lastDay = Number.NaN;
let lastDayText = '';

/**
 * `new Date(milliseconds).toISOString()` by arithmetic for the instants from 1970 to 9999, about
 * eight times faster (V8 formats a date through its printf); anything else (negative, fractional,
 * past 9999, not a number) goes to Date itself, which also throws the same RangeError.
 */
export function formatIsoTime(milliseconds: number): string {
  if (!(milliseconds >= 0 && milliseconds < YEAR_10000_MS && Number.isInteger(milliseconds)))
    return new Date(milliseconds).toISOString();
  const days = Math.floor(milliseconds / DAY_MS);
  if (days !== lastDay) {
    lastDayText = dateOf(days);
    lastDay = days;
  }
  const inDay = milliseconds - days * DAY_MS;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  return `${lastDayText}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/** `YYYY-MM-DDT` of a day count since 1970 (days from civil, in 400-year eras from 0000-03-01). */
function dateOf(days: number): string {
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${pad2(month)}-${pad2(day)}T`;
}

function pad2(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/** Unix seconds, the format of every vendorb-dialect /v1 resource time. */
export function unixSeconds(milliseconds: number): number {
  return Math.floor(milliseconds / 1000);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 date-time; undefined when the text is not one. */
export function parseRfc3339(text: string): number | undefined {
  if (!RFC3339.test(text)) return undefined;
  const value = Date.parse(text);
  return Number.isNaN(value) ? undefined : value;
}
