import { describe, expect, it } from 'vitest';
import { costPerOutcomeGroups } from './cost-per-outcome.js';
import { divideHalfUp, nearestRank } from './money.js';

describe('report arithmetic', () => {
  it('divides rounding half up, exactly beyond 2^53', () => {
    expect([divideHalfUp(5n, 2n), divideHalfUp(7n, 3n), divideHalfUp(8n, 3n), divideHalfUp(0n, 4n)]).toEqual([
      3n,
      2n,
      3n,
      0n,
    ]);
    expect(divideHalfUp(2n ** 64n + 1n, 2n)).toBe(2n ** 63n + 1n);
  });

  it('takes nearest-rank percentiles (the median of an even count is the lower middle)', () => {
    const values = [10n, 20n, 30n, 40n];
    expect([
      nearestRank(values, 50),
      nearestRank(values, 90),
      nearestRank([7n], 90),
      nearestRank([], 50),
    ]).toEqual([20n, 40n, 7n, null]);
    const hundred = Array.from({ length: 100 }, (_, index) => BigInt(index + 1));
    expect([nearestRank(hundred, 50), nearestRank(hundred, 90)]).toEqual([50n, 90n]);
  });

  it('charges the whole period to each value: cost per value includes the failures on the way', () => {
    const unit = (spend: bigint, head: string | null, provisional = false) => ({
      workUnitId: `wku_${spend}`,
      spendMicrosUsd: spend,
      unknownAttempts: 0n,
      headValueJson: head,
      headProvisional: provisional,
    });
    const groups = costPerOutcomeGroups(
      [unit(100n, 'true', true), unit(50n, 'false'), unit(1n, null)],
      ['true', 'false'],
    );
    expect(groups.map((group) => [group.value, group.work_units, group.cost_per_value_micros_usd])).toEqual([
      [true, 1, 151],
      [false, 1, 151],
      [null, 1, null],
    ]);
    expect(groups[0]).toMatchObject({ provisional_work_units: 1, spend_per_work_unit_micros_usd: 100 });
  });
});
