/** Row -> domain mappers of the reports sub-port (both adapters; sums arrive as bigint or text). */
import { GatewayError } from '../errors/gateway-error.js';
import type { RefusalRow, SpendGroupKey, SpendRow, SpendTotals, WorkUnitSpend } from './reports-port.js';
import type { Row } from './rows.js';

/** An exact integer from a driver value: bigint (SQLite safeIntegers), text (PostgreSQL numeric/bigint). */
export function exact(value: unknown): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new Error(`not an exact integer: ${String(value)}`);
}

function groupKey(row: Row): SpendGroupKey {
  const key: SpendGroupKey = {};
  if (row.bucket !== undefined) key.bucket = String(row.bucket);
  if (row.attribute !== undefined) key.attribute = row.attribute === null ? null : String(row.attribute);
  if (row.alias !== undefined) key.alias = String(row.alias);
  if (row.connection !== undefined) key.connection = String(row.connection);
  if (row.upstream_model !== undefined) key.upstream_model = String(row.upstream_model);
  if (row.key_id !== undefined) key.key_id = String(row.key_id);
  return key;
}

const FIGURE_LIMIT_MESSAGE =
  'A report figure reaches 2^53 (9,007,199,254,740,992) and is not exact as a JSON number; ask for a shorter period or a finer grouping';

/**
 * An exact count or sum from a driver value (text from PostgreSQL, a number or bigint from SQLite)
 * as a JS number. Every integer below 2^53 converts exactly, and anything at or past it converts
 * to a number that is not a safe integer (conversion rounds monotonically), so the check refuses
 * it instead of rounding.
 */
export function figure(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(number))
    throw new GatewayError('report_figure_too_large', `${FIGURE_LIMIT_MESSAGE}: ${String(value)}`);
  return number;
}

/** a + b of two figures, refused (never rounded) when the exact sum reaches 2^53. */
export function plus(a: number, b: number): number {
  const sum = a + b;
  if (!Number.isSafeInteger(sum)) throw new GatewayError('report_figure_too_large', FIGURE_LIMIT_MESSAGE);
  return sum;
}

export function spendFromRow(row: Row): SpendRow {
  return {
    key: groupKey(row),
    totals: {
      calls: figure(row.calls),
      inputTokens: figure(row.input_tokens),
      outputTokens: figure(row.output_tokens),
      cacheCreationInputTokens: figure(row.cache_creation_input_tokens),
      cacheReadInputTokens: figure(row.cache_read_input_tokens),
      committedMicrosUsd: figure(row.committed),
      unknownAttempts: figure(row.unknown_attempts),
      unknownMicrosUsd: figure(row.unknown_committed),
    },
  };
}

/** Adds `more` into `sum` (checked). */
export function addTotals(sum: SpendTotals, more: SpendTotals): void {
  sum.calls = plus(sum.calls, more.calls);
  sum.inputTokens = plus(sum.inputTokens, more.inputTokens);
  sum.outputTokens = plus(sum.outputTokens, more.outputTokens);
  sum.cacheCreationInputTokens = plus(sum.cacheCreationInputTokens, more.cacheCreationInputTokens);
  sum.cacheReadInputTokens = plus(sum.cacheReadInputTokens, more.cacheReadInputTokens);
  sum.committedMicrosUsd = plus(sum.committedMicrosUsd, more.committedMicrosUsd);
  sum.unknownAttempts = plus(sum.unknownAttempts, more.unknownAttempts);
  sum.unknownMicrosUsd = plus(sum.unknownMicrosUsd, more.unknownMicrosUsd);
}

export function refusalFromRow(row: Row): RefusalRow {
  return { key: groupKey(row), refusals: figure(row.refusals) };
}

export function workUnitSpendFromRow(row: Row): WorkUnitSpend {
  const provisional = row.head_provisional;
  return {
    workUnitId: String(row.work_unit_id),
    spendMicrosUsd: exact(row.spend),
    unknownAttempts: exact(row.unknown_attempts),
    headValueJson: row.head_value === null || row.head_value === undefined ? null : String(row.head_value),
    headProvisional: provisional === true || provisional === 1 || provisional === 1n,
    ...(row.attribute === undefined
      ? {}
      : { attribute: row.attribute === null ? null : String(row.attribute) }),
  };
}

/** A spend query over no rows still answers one zero row when ungrouped: drop it (COUNT(*) = 0). */
export function nonEmpty(row: SpendRow): boolean {
  return row.totals.calls > 0;
}

/** Group keys in code-unit order, field by field, absent fields first (the order of report rows). */
export function compareSpendKeys(a: SpendGroupKey, b: SpendGroupKey): number {
  return (
    compareField(a.bucket, b.bucket) ||
    compareAttribute(a.attribute, b.attribute) ||
    compareField(a.alias, b.alias) ||
    compareField(a.connection, b.connection) ||
    compareField(a.upstream_model, b.upstream_model) ||
    compareField(a.key_id, b.key_id)
  );
}

function compareField(a: string | undefined, b: string | undefined): number {
  const left = a ?? '';
  const right = b ?? '';
  return left === right ? 0 : left < right ? -1 : 1;
}

/** Attribute values: null (without the attribute) first, then in code-unit order ('' is a value). */
function compareAttribute(a: string | null | undefined, b: string | null | undefined): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return -1;
  if (b === undefined || b === null) return 1;
  return a < b ? -1 : 1;
}

/** sum - part, per figure: the part is a subset of the attempts the sum counts, so never negative. */
function minusTotals(sum: SpendTotals, part: SpendTotals): SpendTotals {
  const difference: SpendTotals = {
    calls: sum.calls - part.calls,
    inputTokens: sum.inputTokens - part.inputTokens,
    outputTokens: sum.outputTokens - part.outputTokens,
    cacheCreationInputTokens: sum.cacheCreationInputTokens - part.cacheCreationInputTokens,
    cacheReadInputTokens: sum.cacheReadInputTokens - part.cacheReadInputTokens,
    committedMicrosUsd: sum.committedMicrosUsd - part.committedMicrosUsd,
    unknownAttempts: sum.unknownAttempts - part.unknownAttempts,
    unknownMicrosUsd: sum.unknownMicrosUsd - part.unknownMicrosUsd,
  };
  if (Object.values(difference).some((value) => value < 0))
    throw new Error('attribute rollup holds more than the audit trail it was folded from');
  return difference;
}

/**
 * A report grouped by an attribute, from the groups without it (`all`: every attempt, per bucket
 * and dimensions) and the groups of the attempts that carry it (`attributed`: per bucket, value
 * and dimensions, both already in key order with each key once). An attempt carries a key at most
 * once, so the attempts WITHOUT it in a group are the group's total minus the sum of its values:
 * that difference is the group with value null. Result: in key order.
 */
export function withUnattributed(all: readonly SpendRow[], attributed: readonly SpendRow[]): SpendRow[] {
  const withoutValue = (key: SpendGroupKey) =>
    JSON.stringify([key.bucket, key.alias, key.connection, key.upstream_model, key.key_id]);
  const carried = new Map<string, SpendTotals>();
  for (const row of attributed) {
    const group = withoutValue(row.key);
    const sum = carried.get(group);
    if (sum === undefined) carried.set(group, { ...row.totals });
    else addTotals(sum, row.totals);
  }
  const rows: SpendRow[] = [...attributed];
  for (const row of all) {
    const part = carried.get(withoutValue(row.key));
    const rest = part === undefined ? row.totals : minusTotals(row.totals, part);
    if (rest.calls > 0) rows.push({ key: { ...row.key, attribute: null }, totals: rest });
  }
  return inKeyOrder(rows, (into, more) => addTotals(into.totals, more.totals));
}

/**
 * Rows in key order, each key once: sorts (linear on rows already in order, as the stores read
 * them) and merges neighbours of equal keys into the first with `merge`.
 */
export function inKeyOrder<T extends { key: SpendGroupKey }>(
  rows: T[],
  merge: (into: T, more: T) => void,
): T[] {
  rows.sort((a, b) => compareSpendKeys(a.key, b.key));
  const out: T[] = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (last !== undefined && compareSpendKeys(last.key, row.key) === 0) merge(last, row);
    else out.push(row);
  }
  return out;
}
