/**
 * The spend report: attempts reserved in [from, to) (their audit rows, i.e. settled attempts),
 * grouped by hour or day and/or alias, connection, upstream model, Gateway Key: calls, tokens by
 * type, committed micro-USD (unknown attempts included at their whole reservation, and also shown
 * apart), and the reservations that were refused. All sums are exact integers.
 */
import type { Caller } from '../governance/service.js';
import type { Store } from '../store/port.js';
import { compareSpendKeys, spendKeyId } from '../store/report-rows.js';
import type {
  SpendDimension,
  SpendGroupKey,
  SpendQuery,
  SpendTotals,
  TimeBucket,
} from '../store/reports-port.js';
import { jsonInteger } from './money.js';
import { badParameter, Params, type Query } from './params.js';
import { timeRange } from './range.js';

export const GROUP_BY_VALUES = ['day', 'hour', 'alias', 'connection', 'upstream_model', 'key'] as const;
type GroupBy = (typeof GROUP_BY_VALUES)[number];

/** Column order of a row (JSON key order and CSV columns). */
export const SPEND_FIGURES = [
  'calls',
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'committed_micros_usd',
  'unknown_attempts',
  'unknown_micros_usd',
  'refused_reservations',
] as const;
const KEY_FIELDS = ['bucket', 'alias', 'connection', 'upstream_model', 'key_id'] as const;

type Figures = Record<(typeof SPEND_FIGURES)[number], bigint>;

function parseGroupBy(value: string | undefined): {
  bucket: TimeBucket | null;
  dimensions: SpendDimension[];
} {
  const names = (value ?? 'day').split(',');
  const seen = new Set<string>();
  for (const name of names) {
    if (!(GROUP_BY_VALUES as readonly string[]).includes(name)) {
      throw badParameter('group_by', `${JSON.stringify(name)} is not one of ${GROUP_BY_VALUES.join(', ')}.`);
    }
    if (seen.has(name)) throw badParameter('group_by', `${name} given twice.`);
    seen.add(name);
  }
  if (seen.has('day') && seen.has('hour')) throw badParameter('group_by', 'day and hour exclude each other.');
  const bucket: TimeBucket | null = seen.has('hour') ? 'hour' : seen.has('day') ? 'day' : null;
  const dimensions = (names as GroupBy[]).flatMap((name): SpendDimension[] => {
    switch (name) {
      case 'day':
      case 'hour':
        return [];
      case 'key':
        return ['key_id'];
      case 'alias':
      case 'connection':
      case 'upstream_model':
        return [name];
      default: {
        const never: never = name;
        throw new Error(`unknown group ${String(never)}`);
      }
    }
  });
  return { bucket, dimensions };
}

function zero(): Figures {
  return Object.fromEntries(SPEND_FIGURES.map((name) => [name, 0n])) as Figures;
}

function fromTotals(totals: SpendTotals): Figures {
  return {
    calls: totals.calls,
    input_tokens: totals.inputTokens,
    output_tokens: totals.outputTokens,
    cache_creation_input_tokens: totals.cacheCreationInputTokens,
    cache_read_input_tokens: totals.cacheReadInputTokens,
    committed_micros_usd: totals.committedMicrosUsd,
    unknown_attempts: totals.unknownAttempts,
    unknown_micros_usd: totals.unknownMicrosUsd,
    refused_reservations: 0n,
  };
}

function add(target: Figures, more: Figures): void {
  for (const name of SPEND_FIGURES) target[name] += more[name];
}

function render(figures: Figures, out: Record<string, string | number> = {}): Record<string, number> {
  for (const name of SPEND_FIGURES) out[name] = jsonInteger(figures[name]);
  return out as Record<string, number>;
}

export interface SpendReport {
  object: 'spend_report';
  from: string;
  to: string;
  group_by: string[];
  rows: Array<Record<string, string | number>>;
  totals: Record<string, number>;
}

export async function spendReport(
  store: Store,
  caller: Caller,
  query: Query,
  nowMs: number,
): Promise<SpendReport> {
  const params = new Params(query, ['from', 'to', 'group_by']);
  const groupBy = params.text('group_by');
  const { bucket, dimensions } = parseGroupBy(groupBy);
  const range = timeRange(params, nowMs);
  const spendQuery: SpendQuery = { projectId: caller.projectId, ...range, bucket, dimensions };
  const [spend, refusals] = await Promise.all([
    store.reports.spend(spendQuery),
    store.reports.refusals(spendQuery),
  ]);
  // The store answers one row per group already (43,200 rows for 30 days hourly by every
  // dimension): each row's figures are used as they are, merged only when a key repeats.
  const groups = new Map<string, { key: SpendGroupKey; figures: Figures }>();
  for (const row of spend) {
    const id = spendKeyId(row.key);
    const group = groups.get(id);
    if (group) add(group.figures, fromTotals(row.totals));
    else groups.set(id, { key: row.key, figures: fromTotals(row.totals) });
  }
  for (const row of refusals) {
    const id = spendKeyId(row.key);
    let group = groups.get(id);
    if (!group) {
      group = { key: row.key, figures: zero() };
      groups.set(id, group);
    }
    group.figures.refused_reservations += row.refusals;
  }
  const ordered = [...groups.values()].sort((a, b) => compareSpendKeys(a.key, b.key));
  const totals = zero();
  for (const group of ordered) add(totals, group.figures);
  return {
    object: 'spend_report',
    from: range.fromIso,
    to: range.toIso,
    group_by: (groupBy ?? 'day').split(','),
    rows: ordered.map((group) => render(group.figures, renderKey(group.key))),
    totals: render(totals),
  };
}

function renderKey(key: SpendGroupKey): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const field of KEY_FIELDS) if (key[field] !== undefined) out[field] = key[field];
  return out;
}
