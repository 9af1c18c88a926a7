/** Row -> domain mappers of the reports sub-port (both adapters; sums arrive as bigint or text). */
import type { RefusalRow, SpendGroupKey, SpendRow, WorkUnitSpend } from './reports-port.js';
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
  if (row.alias !== undefined) key.alias = String(row.alias);
  if (row.connection !== undefined) key.connection = String(row.connection);
  if (row.upstream_model !== undefined) key.upstream_model = String(row.upstream_model);
  if (row.key_id !== undefined) key.key_id = String(row.key_id);
  return key;
}

export function spendFromRow(row: Row): SpendRow {
  return {
    key: groupKey(row),
    totals: {
      calls: exact(row.calls),
      inputTokens: exact(row.input_tokens),
      outputTokens: exact(row.output_tokens),
      cacheCreationInputTokens: exact(row.cache_creation_input_tokens),
      cacheReadInputTokens: exact(row.cache_read_input_tokens),
      committedMicrosUsd: exact(row.committed),
      unknownAttempts: exact(row.unknown_attempts),
      unknownMicrosUsd: exact(row.unknown_committed),
    },
  };
}

export function refusalFromRow(row: Row): RefusalRow {
  return { key: groupKey(row), refusals: exact(row.refusals) };
}

export function workUnitSpendFromRow(row: Row): WorkUnitSpend {
  const provisional = row.head_provisional;
  return {
    workUnitId: String(row.work_unit_id),
    spendMicrosUsd: exact(row.spend),
    unknownAttempts: exact(row.unknown_attempts),
    headValueJson: row.head_value === null || row.head_value === undefined ? null : String(row.head_value),
    headProvisional: provisional === true || provisional === 1 || provisional === 1n,
  };
}

/** A spend query over no rows still answers one zero row when ungrouped: drop it (COUNT(*) = 0). */
export function nonEmpty(row: SpendRow): boolean {
  return row.totals.calls > 0n;
}

const KEY_FIELDS = ['bucket', 'alias', 'connection', 'upstream_model', 'key_id'] as const;

/** One string per group key (the fields joined by NUL, absent ones empty). */
export function spendKeyId(key: SpendGroupKey): string {
  return KEY_FIELDS.map((field) => key[field] ?? '').join('\u0000');
}

/** Group keys in code-unit order, field by field (the order of report rows). */
export function compareSpendKeys(a: SpendGroupKey, b: SpendGroupKey): number {
  for (const field of KEY_FIELDS) {
    const left = a[field] ?? '';
    const right = b[field] ?? '';
    if (left !== right) return left < right ? -1 : 1;
  }
  return 0;
}
