/**
 * Cost per Outcome (DESIGN.md section 4; docs/reports.md has the exact definitions).
 *
 * For one Outcome Definition and the Work Units created in [from, to):
 * - a Work Unit's spend = the sum of committed micro-USD of its Runs (unknown attempts included at
 *   their whole reservation);
 * - each Work Unit counts once, under the value of its head revision for the definition; Work Units
 *   without one form the group with value null; provisional heads are counted and flagged;
 * - per value: Work Units, total spend, spend per Work Unit = total / Work Units (rounded half up),
 *   median and p90 (nearest rank);
 * - cost per value = total spend of ALL Work Units of the period / Work Units whose head is the value
 *   (rounded half up): the price of one such Outcome including what the others cost on the way.
 *
 * With `group_by=metadata.<key>` the Work Units are partitioned by that key of their metadata (null:
 * without it) and every figure above is computed within each partition. With `group_by=tag.<key>`
 * each Work Unit's spend is split by the tag's value on its attempts: a Work Unit is a member of
 * every value's partition it spent on (with that part of its spend), and of the null partition for
 * its attempts without the tag (or with spend 0 when it has no attempts). docs/reports.md.
 */
import type { Caller } from '../governance/service.js';
import type { Store } from '../store/port.js';
import type { AttributeRef, WorkUnitSpend } from '../store/reports-port.js';
import { attributeField, parseAttributeGroup } from './attribute-group.js';
import { ascending, divideHalfUp, jsonInteger, nearestRank } from './money.js';
import { badParameter, Params, type Query } from './params.js';
import { timeRange } from './range.js';

export type ValueGroup = {
  /** The Outcome value; null for Work Units with no Outcome for the definition yet. */
  value: string | boolean | null;
  work_units: number;
  provisional_work_units: number;
  total_spend_micros_usd: number;
  spend_per_work_unit_micros_usd: number | null;
  median_spend_micros_usd: number | null;
  p90_spend_micros_usd: number | null;
  /** Null for the no-Outcome group and for values no Work Unit has. */
  cost_per_value_micros_usd: number | null;
  unknown_attempts: number;
};

/** A group of a grouped report: the attribute's value under its field (`metadata.team`), then the figures. */
export type AttributedGroup = ValueGroup & Record<string, string | number | boolean | null>;

export interface CostPerOutcomeReport {
  object: 'cost_per_outcome_report';
  definition_id: string;
  /** Present when grouped: `metadata.<key>` or `tag.<key>`, the field each group carries. */
  group_by?: string;
  from: string;
  to: string;
  work_units: number;
  total_spend_micros_usd: number;
  unknown_attempts: number;
  groups: Array<ValueGroup | AttributedGroup>;
}

/**
 * Pure: the groups of each attribute value's partition (null first, then values in code-unit
 * order), each group carrying the value under `field` before its own figures.
 */
export function partitionedGroups(
  units: readonly WorkUnitSpend[],
  values: readonly string[],
  field: string,
): Array<AttributedGroup> {
  const partitions = new Map<string | null, WorkUnitSpend[]>();
  for (const unit of units) {
    const value = unit.attribute ?? null;
    const members = partitions.get(value);
    if (members) members.push(unit);
    else partitions.set(value, [unit]);
  }
  const order = [...partitions.keys()].sort((a, b) =>
    a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1,
  );
  return order.flatMap((value) =>
    costPerOutcomeGroups(partitions.get(value)!, values).map((group) => ({ [field]: value, ...group })),
  );
}

/** Pure: the groups of a period from its Work Units (`values`: the definition's values, in order). */
export function costPerOutcomeGroups(
  units: readonly WorkUnitSpend[],
  values: readonly string[],
): ValueGroup[] {
  const total = units.reduce((sum, unit) => sum + unit.spendMicrosUsd, 0n);
  const byValue = new Map<string | null, WorkUnitSpend[]>(values.map((value) => [value, []]));
  for (const unit of units) {
    const members = byValue.get(unit.headValueJson);
    if (members) members.push(unit);
    else byValue.set(unit.headValueJson, [unit]);
  }
  const groups: ValueGroup[] = [];
  for (const [valueJson, members] of byValue) {
    if (valueJson === null) continue;
    groups.push(group(JSON.parse(valueJson) as string | boolean, members, total));
  }
  groups.push(group(null, byValue.get(null) ?? [], total));
  return groups;
}

function group(
  value: string | boolean | null,
  members: readonly WorkUnitSpend[],
  periodTotal: bigint,
): ValueGroup {
  const spends = members.map((unit) => unit.spendMicrosUsd).sort(ascending);
  const total = spends.reduce((sum, spend) => sum + spend, 0n);
  const count = BigInt(members.length);
  const optional = (amount: bigint | null) => (amount === null ? null : jsonInteger(amount));
  return {
    value,
    work_units: members.length,
    provisional_work_units: members.filter((unit) => unit.headProvisional).length,
    total_spend_micros_usd: jsonInteger(total),
    spend_per_work_unit_micros_usd: count === 0n ? null : jsonInteger(divideHalfUp(total, count)),
    median_spend_micros_usd: optional(nearestRank(spends, 50)),
    p90_spend_micros_usd: optional(nearestRank(spends, 90)),
    cost_per_value_micros_usd:
      value === null || count === 0n ? null : jsonInteger(divideHalfUp(periodTotal, count)),
    unknown_attempts: jsonInteger(members.reduce((sum, unit) => sum + unit.unknownAttempts, 0n)),
  };
}

export async function costPerOutcomeReport(
  store: Store,
  caller: Caller,
  query: Query,
  nowMs: number,
): Promise<CostPerOutcomeReport> {
  const params = new Params(query, ['definition_id', 'from', 'to', 'group_by']);
  const definitionId = params.text('definition_id');
  if (definitionId === undefined) throw badParameter('definition_id', 'required (an Outcome Definition id).');
  const groupBy = parseGroupBy(params.text('group_by'));
  const range = timeRange(params, nowMs);
  const versions = (await store.listDefinitions(caller.projectId))
    .filter((definition) => definition.id === definitionId)
    .sort((a, b) => b.version - a.version);
  if (versions.length === 0)
    throw badParameter('definition_id', `unknown Outcome Definition ${definitionId}.`);
  const values = [
    ...new Set(versions.flatMap((definition) => definition.allowedValues.map((v) => JSON.stringify(v)))),
  ];
  const units = await store.reports.workUnitSpend({
    projectId: caller.projectId,
    definitionId,
    ...range,
    groupBy,
  });
  const field = groupBy === null ? null : attributeField(groupBy);
  return {
    object: 'cost_per_outcome_report',
    definition_id: definitionId,
    ...(field === null ? {} : { group_by: field }),
    from: range.fromIso,
    to: range.toIso,
    // Split by a tag, a Work Unit has a row per value it spent on: count each once.
    work_units: new Set(units.map((unit) => unit.workUnitId)).size,
    total_spend_micros_usd: jsonInteger(units.reduce((sum, unit) => sum + unit.spendMicrosUsd, 0n)),
    unknown_attempts: jsonInteger(units.reduce((sum, unit) => sum + unit.unknownAttempts, 0n)),
    groups: field === null ? costPerOutcomeGroups(units, values) : partitionedGroups(units, values, field),
  };
}

/** group_by of cost per Outcome: one `metadata.<key>` (the Work Unit's) or `tag.<key>`. */
function parseGroupBy(value: string | undefined): AttributeRef | null {
  if (value === undefined) return null;
  const attribute = parseAttributeGroup('group_by', value);
  if (attribute === undefined) {
    throw badParameter(
      'group_by',
      `${JSON.stringify(value)} is not metadata.<key> or tag.<key> (one of them).`,
    );
  }
  return attribute;
}
