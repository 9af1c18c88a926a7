/**
 * Messages-wire usage -> the four canonical counters. Lenient: a missing or null counter is 0
 * (older upstreams omit the cache counters); a counter that is present but not a non-negative
 * integer is a protocol error, never silently clamped.
 */
import type { Usage } from '../../canonical/types.js';
import { UpstreamProtocolError } from '../shared/types.js';

export const USAGE_FIELDS = [
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
] as const satisfies ReadonlyArray<keyof Usage>;

export function normaliseUsage(value: unknown): Usage {
  const source = isRecord(value) ? value : {};
  return {
    input_tokens: counter(source, 'input_tokens') ?? 0,
    output_tokens: counter(source, 'output_tokens') ?? 0,
    cache_creation_input_tokens: counter(source, 'cache_creation_input_tokens') ?? 0,
    cache_read_input_tokens: counter(source, 'cache_read_input_tokens') ?? 0,
  };
}

/**
 * message_delta usage values are cumulative totals: each non-null one overwrites (never adds to)
 * what message_start reported.
 */
export function mergeCumulativeUsage(current: Usage, value: unknown): Usage {
  if (!isRecord(value)) return current;
  const next: Usage = { ...current };
  for (const field of USAGE_FIELDS) {
    const total = counter(value, field);
    if (total !== undefined) next[field] = total;
  }
  return next;
}

/** undefined when absent or null. */
function counter(source: Record<string, unknown>, field: keyof Usage): number | undefined {
  const value = source[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new UpstreamProtocolError(`usage.${field} is not a non-negative integer: ${JSON.stringify(value)}`);
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
