/**
 * Independent recomputation of the reports from the audit trail and the Work Unit reads, written
 * without the report code (plain loops over store.listAudit and GET /svc/v1/work-units/{id}), so a
 * test can compare every figure the API (or the console) shows.
 */
import type { AuditEntry, Store } from '../../src/store/port.js';

export async function auditOf(store: Store, projectId: string): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let after = 0;
  for (;;) {
    const page = await store.listAudit({ projectId, afterSequence: after, limit: 1000 });
    entries.push(...page);
    if (page.length < 1000) return entries;
    after = page[page.length - 1]!.sequence;
  }
}

export interface Totals {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  committed_micros_usd: number;
  unknown_attempts: number;
  unknown_micros_usd: number;
}

/** Spend per (day, alias) and overall, from audit entries reserved in [from, to). */
export function spendByDayAndAlias(entries: AuditEntry[], from: string, to: string) {
  const rows = new Map<string, Totals & { bucket: string; alias: string }>();
  const total: Totals = zero();
  for (const entry of entries) {
    if (entry.createdAt < from || entry.createdAt >= to) continue;
    const bucket = `${entry.createdAt.slice(0, 10)}T00:00:00.000Z`;
    const id = `${bucket}|${entry.alias}`;
    const row = rows.get(id) ?? { bucket, alias: entry.alias, ...zero() };
    rows.set(id, row);
    for (const target of [row, total]) {
      target.calls += 1;
      target.input_tokens += entry.usage?.inputTokens ?? 0;
      target.output_tokens += entry.usage?.outputTokens ?? 0;
      target.cache_creation_input_tokens += entry.usage?.cacheCreationInputTokens ?? 0;
      target.cache_read_input_tokens += entry.usage?.cacheReadInputTokens ?? 0;
      target.committed_micros_usd += entry.costMicrosUsd;
      if (entry.state === 'unknown') {
        target.unknown_attempts += 1;
        target.unknown_micros_usd += entry.costMicrosUsd;
      }
    }
  }
  return { rows: [...rows.values()], total };
}

function zero(): Totals {
  return {
    calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    committed_micros_usd: 0,
    unknown_attempts: 0,
    unknown_micros_usd: 0,
  };
}

export interface UnitFacts {
  spend: number;
  head: { value: unknown; provisional: boolean } | null;
}

/** Nearest rank: the ceil(p% x n)-th smallest. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

/** Half up for non-negative integers. */
export function divide(a: number, b: number): number {
  return Math.floor((2 * a + b) / (2 * b));
}

export function costPerOutcome(units: UnitFacts[], values: unknown[]) {
  const total = units.reduce((sum, unit) => sum + unit.spend, 0);
  return [...values, null].map((value) => {
    const members = units.filter((unit) =>
      value === null ? unit.head === null : unit.head?.value === value,
    );
    const spends = members.map((unit) => unit.spend);
    const sum = spends.reduce((a, b) => a + b, 0);
    return {
      value,
      work_units: members.length,
      provisional_work_units: members.filter((unit) => unit.head?.provisional).length,
      total_spend_micros_usd: sum,
      spend_per_work_unit_micros_usd: members.length === 0 ? null : divide(sum, members.length),
      median_spend_micros_usd: percentile(spends, 50),
      p90_spend_micros_usd: percentile(spends, 90),
      cost_per_value_micros_usd:
        value === null || members.length === 0 ? null : divide(total, members.length),
    };
  });
}
