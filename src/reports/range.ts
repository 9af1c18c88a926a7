/**
 * The time range of a report: `from` and `to` are whole UTC hours (RFC 3339), `from` < `to`, at most
 * 400 days apart. Default: the 30 days up to the end of the current hour.
 */
import { isoTime } from '../lib/clock.js';
import { badParameter, type Params } from './params.js';

const HOUR_MS = 3_600_000;
const MAX_RANGE_MS = 400 * 24 * HOUR_MS;
export const DEFAULT_RANGE_MS = 30 * 24 * HOUR_MS;

export interface TimeRange {
  fromIso: string;
  toIso: string;
}

function wholeHour(name: string, iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  if (ms % HOUR_MS !== 0) throw badParameter(name, 'must be a whole UTC hour, e.g. 2026-11-01T00:00:00Z.');
  return ms;
}

export function timeRange(params: Params, nowMs: number): TimeRange {
  const to = wholeHour('to', params.time('to')) ?? Math.ceil((nowMs + 1) / HOUR_MS) * HOUR_MS;
  const from = wholeHour('from', params.time('from')) ?? to - DEFAULT_RANGE_MS;
  if (from >= to) throw badParameter('from', 'must be before to.');
  if (to - from > MAX_RANGE_MS) throw badParameter('from', 'the range is limited to 400 days.');
  return { fromIso: isoTime(from), toIso: isoTime(to) };
}
