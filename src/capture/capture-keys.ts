/**
 * Where a capture lives in the object store, derived from an attempt id alone (no table): the key
 * `cap_<UTC time of the attempt, YYYYMMDDTHHMMSSZ>_<attempt id>` in the attempt's Project. Attempt
 * ids carry their creation time (lib/ids.ts newTimeOrderedId), so the reader finds the object
 * from the id and the sweep reads the time from the key: a capture expires `retention_hours` after
 * its attempt was created.
 */
import { timeOfTimeOrderedId } from '../lib/ids.js';

export const CAPTURE_PREFIX = 'cap_';

/** `20261128T040832Z` */
function compactUtc(timeMs: number): string {
  return new Date(timeMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

export interface CaptureAddress {
  key: string;
  /** The attempt's creation time (ms): retention counts from it. */
  timeMs: number;
}

/** The key of the capture filed under `attemptId`, or undefined when the id carries no time. */
export function captureAddressOf(attemptId: string): CaptureAddress | undefined {
  const timeMs = timeOfTimeOrderedId(attemptId);
  if (timeMs === undefined || !attemptId.startsWith('att_')) return undefined;
  return { key: `${CAPTURE_PREFIX}${compactUtc(timeMs)}_${attemptId}`, timeMs };
}

/** The attempt time a capture key was made from, or undefined for a key this module did not make. */
export function timeOfCaptureKey(key: string): number | undefined {
  if (!key.startsWith(CAPTURE_PREFIX)) return undefined;
  const attemptId = key.slice(CAPTURE_PREFIX.length + 17);
  const address = captureAddressOf(attemptId);
  return address?.key === key ? address.timeMs : undefined;
}
