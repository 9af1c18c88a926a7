import { describe, expect, it } from 'vitest';
import type { WorkUnitSpend } from '../store/reports-port.js';
import { partitionedGroups } from './cost-per-outcome.js';

const part = (
  workUnitId: string,
  attribute: string | null,
  spend: bigint,
  head: string | null,
): WorkUnitSpend => ({
  workUnitId,
  attribute,
  spendMicrosUsd: spend,
  unknownAttempts: 0n,
  headValueJson: head,
  headProvisional: false,
});

describe('cost per Outcome split by a tag (the worked example of docs/reports.md)', () => {
  const parts = [
    part('A', 'draft', 100n, 'true'),
    part('A', 'review', 40n, 'true'),
    part('B', 'draft', 60n, 'false'),
    part('C', null, 10n, null),
  ];
  const groups = partitionedGroups(parts, ['true', 'false'], 'tag.feature');
  const find = (feature: string | null, value: boolean | null) =>
    groups.find((group) => group['tag.feature'] === feature && group.value === value)!;

  it('computes each partition from the parts spent in it', () => {
    expect(find('draft', true)).toMatchObject({
      work_units: 1,
      total_spend_micros_usd: 100,
      cost_per_value_micros_usd: 160,
    });
    expect(find('draft', false)).toMatchObject({ work_units: 1, cost_per_value_micros_usd: 160 });
    expect(find('review', true)).toMatchObject({ total_spend_micros_usd: 40, cost_per_value_micros_usd: 40 });
    expect(find(null, null)).toMatchObject({ work_units: 1, total_spend_micros_usd: 10 });
  });

  it('lists partitions null first, then by value, each with every value and the no-Outcome group', () => {
    expect(groups.map((group) => [group['tag.feature'], group.value])).toEqual([
      [null, true],
      [null, false],
      [null, null],
      ['draft', true],
      ['draft', false],
      ['draft', null],
      ['review', true],
      ['review', false],
      ['review', null],
    ]);
    const total = groups.reduce((sum, group) => sum + group.total_spend_micros_usd, 0);
    expect(total).toBe(210);
  });
});
