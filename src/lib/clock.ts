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
 * their milliseconds, so most lookups hit. `toISOString` costs about half a microsecond.
 */
const FORMATTED_SLOTS = 8;
const formattedAt = new Float64Array(FORMATTED_SLOTS).fill(Number.NaN);
const formatted: string[] = new Array<string>(FORMATTED_SLOTS).fill('');

/** RFC 3339 UTC with milliseconds, the format of every /svc/v1 time. */
export function isoTime(milliseconds: number): string {
  const slot = milliseconds & (FORMATTED_SLOTS - 1);
  if (formattedAt[slot] === milliseconds) return formatted[slot]!;
  const text = new Date(milliseconds).toISOString();
  formattedAt[slot] = milliseconds;
  formatted[slot] = text;
  return text;
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
