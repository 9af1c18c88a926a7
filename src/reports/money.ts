/** Exact integer arithmetic of the reports (micro-USD are bigint until rendered). */

/** a / b rounded half up, for a >= 0 and b > 0. */
export function divideHalfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/**
 * Nearest-rank percentile of ascending values: the value at rank ceil(p / 100 x n) (1-based), so
 * the result is always one Work Unit's actual spend. The median is the 50th percentile (for an even
 * count: the lower of the two middle values). Null when there are no values.
 */
export function nearestRank(sortedAscending: readonly bigint[], percent: number): bigint | null {
  const n = sortedAscending.length;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil((percent * n) / 100));
  return sortedAscending[rank - 1] ?? null;
}

/** A bigint as a JSON number; the reports refuse to round an amount past 2^53 - 1 silently. */
const MAX_JSON_INTEGER = BigInt(Number.MAX_SAFE_INTEGER);

export function jsonInteger(value: bigint): number {
  if (value > MAX_JSON_INTEGER) throw new Error('report figure above 2^53 - 1');
  return Number(value);
}

export function ascending(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
