/**
 * The spend report: attempts reserved in [from, to) (their audit rows, i.e. settled attempts),
 * grouped by hour or day and/or alias, connection, upstream model, Gateway Key and one attribute
 * (`tag.<key>` or `metadata.<key>`: attempts without it in the group null): calls, tokens by
 * type, committed micro-USD (unknown attempts included at their whole reservation, and also shown
 * apart), and the reservations that were refused. All sums are exact integers.
 */
import type { Caller } from '../governance/service.js';
import type { Store } from '../store/port.js';
import { addTotals, compareSpendKeys, inKeyOrder, plus } from '../store/report-rows.js';
import {
  type AttributeRef,
  SPEND_DIMENSIONS,
  type SpendDimension,
  type SpendGroupKey,
  type SpendQuery,
  type SpendTotals,
  type TimeBucket,
} from '../store/reports-port.js';
import { attributeField, parseAttributeGroup } from './attribute-group.js';
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

/** What group_by accepts, for the messages of a 400. */
const GROUP_BY_RULE = `one of ${GROUP_BY_VALUES.join(', ')}, tag.<key> or metadata.<key>`;

interface Grouping {
  bucket: TimeBucket | null;
  dimensions: SpendDimension[];
  attribute: AttributeRef | null;
}

function parseGroupBy(value: string | undefined): Grouping {
  const given = (value ?? 'day').split(',');
  const seen = new Set<string>();
  let attribute: AttributeRef | null = null;
  const names: GroupBy[] = [];
  for (const name of given) {
    if (seen.has(name)) throw badParameter('group_by', `${name} given twice.`);
    seen.add(name);
    const group = parseAttributeGroup('group_by', name);
    if (group !== undefined) {
      if (attribute !== null) {
        throw badParameter('group_by', 'at most one tag.<key> or metadata.<key> per report.');
      }
      attribute = group;
      continue;
    }
    if (!(GROUP_BY_VALUES as readonly string[]).includes(name)) {
      throw badParameter('group_by', `${JSON.stringify(name)} is not ${GROUP_BY_RULE}.`);
    }
    names.push(name as GroupBy);
  }
  if (seen.has('day') && seen.has('hour')) throw badParameter('group_by', 'day and hour exclude each other.');
  const bucket: TimeBucket | null = seen.has('hour') ? 'hour' : seen.has('day') ? 'day' : null;
  const dimensions = names.flatMap((name): SpendDimension[] => {
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
  return { bucket, dimensions, attribute };
}

type ReportRow = Record<string, string | number | null>;

/**
 * One report row: the key's fields, then the figures, always in the same order (JSON key order and
 * CSV columns; one object shape for every row).
 */
function reportRow(
  key: SpendGroupKey,
  totals: SpendTotals | undefined,
  refused: number,
  attribute: string | null,
): ReportRow {
  const row: ReportRow = {};
  if (key.bucket !== undefined) row.bucket = key.bucket;
  if (attribute !== null) row[attribute] = key.attribute ?? null;
  if (key.alias !== undefined) row.alias = key.alias;
  if (key.connection !== undefined) row.connection = key.connection;
  if (key.upstream_model !== undefined) row.upstream_model = key.upstream_model;
  if (key.key_id !== undefined) row.key_id = key.key_id;
  return withFigures(row, totals ?? NO_SPEND, refused);
}

function withFigures(row: ReportRow, totals: SpendTotals, refused: number): ReportRow {
  row.calls = totals.calls;
  row.input_tokens = totals.inputTokens;
  row.output_tokens = totals.outputTokens;
  row.cache_creation_input_tokens = totals.cacheCreationInputTokens;
  row.cache_read_input_tokens = totals.cacheReadInputTokens;
  row.committed_micros_usd = totals.committedMicrosUsd;
  row.unknown_attempts = totals.unknownAttempts;
  row.unknown_micros_usd = totals.unknownMicrosUsd;
  row.refused_reservations = refused;
  return row;
}

const NO_SPEND: Readonly<SpendTotals> = {
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
  committedMicrosUsd: 0,
  unknownAttempts: 0,
  unknownMicrosUsd: 0,
};

/** The group columns of a report's rows, in row order (JSON key order and CSV columns). */
export function spendGroupColumns(groupBy: readonly string[]): string[] {
  const { bucket, dimensions, attribute } = parseGroupBy(groupBy.join(','));
  return [
    ...(bucket === null ? [] : ['bucket']),
    ...(attribute === null ? [] : [attributeField(attribute)]),
    ...SPEND_DIMENSIONS.filter((dimension) => dimensions.includes(dimension)),
  ];
}

export interface SpendReport {
  object: 'spend_report';
  from: string;
  to: string;
  group_by: string[];
  rows: ReportRow[];
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
  const { bucket, dimensions, attribute } = parseGroupBy(groupBy);
  const range = timeRange(params, nowMs);
  const spendQuery: SpendQuery = { projectId: caller.projectId, ...range, bucket, dimensions, attribute };
  const [spendRows, refusalRows] = await Promise.all([
    store.reports.spend(spendQuery),
    store.reports.refusals({ ...spendQuery, attribute: null }),
  ]);
  // Refusals carry no attributes (the reservation was refused before any attempt): grouped by
  // one, they count in the group without it.
  if (attribute !== null) for (const row of refusalRows) row.key.attribute = null;
  const field = attribute === null ? null : attributeField(attribute);
  // One row per group in key order from each read (43,200 rows for 30 days hourly by every
  // dimension): the two are merged in one pass, figures are exact integers below 2^53 (checked
  // on every addition, report-rows.ts `plus`), and each report row is built once.
  const spend = inKeyOrder(spendRows, (into, more) => addTotals(into.totals, more.totals));
  const refusals = inKeyOrder(refusalRows, (into, more) => {
    into.refusals = plus(into.refusals, more.refusals);
  });
  const rows: ReportRow[] = [];
  const totals = { ...NO_SPEND };
  let refused = 0;
  let s = 0;
  let r = 0;
  while (s < spend.length || r < refusals.length) {
    const spent = spend[s];
    const refusal = refusals[r];
    const order =
      spent === undefined ? 1 : refusal === undefined ? -1 : compareSpendKeys(spent.key, refusal.key);
    const key = order <= 0 ? spent!.key : refusal!.key;
    const groupTotals = order <= 0 ? spent!.totals : undefined;
    const groupRefused = order >= 0 ? refusal!.refusals : 0;
    if (order <= 0) s++;
    if (order >= 0) r++;
    rows.push(reportRow(key, groupTotals, groupRefused, field));
    if (groupTotals !== undefined) addTotals(totals, groupTotals);
    refused = plus(refused, groupRefused);
  }
  return {
    object: 'spend_report',
    from: range.fromIso,
    to: range.toIso,
    group_by: (groupBy ?? 'day').split(','),
    rows,
    totals: withFigures({}, totals, refused) as Record<string, number>,
  };
}
