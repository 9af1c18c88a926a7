import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { compareSpendKeys, figure, inKeyOrder, plus, withUnattributed } from './report-rows.js';

const MAX = Number.MAX_SAFE_INTEGER; // 2^53 - 1

describe('report figures as checked integers', () => {
  it('reads every integer below 2^53 exactly, from text, number or bigint', () => {
    expect(figure('9007199254740991')).toBe(MAX);
    expect(figure(9007199254740991n)).toBe(MAX);
    expect(figure('0')).toBe(0);
    expect(figure(null)).toBe(0);
    expect(figure(42)).toBe(42);
  });

  it('refuses a value at or past 2^53 instead of rounding it, and anything not an integer', () => {
    for (const value of ['9007199254740992', '9007199254740993', 2n ** 53n + 1n, 2 ** 53, '12.5', 'x'])
      expect(() => figure(value)).toThrow(/2\^53/);
  });

  it('refuses a sum that reaches 2^53', () => {
    expect(plus(MAX - 1, 1)).toBe(MAX);
    expect(() => plus(MAX, 1)).toThrow(/2\^53/);
    expect(() => plus(MAX, MAX)).toThrow(/2\^53/);
  });

  it('refuses with a named error (422 report_figure_too_large), never a 500', () => {
    for (const refuse of [() => figure('9007199254740992'), () => plus(MAX, 1)]) {
      const error = (() => {
        try {
          refuse();
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: 'report_figure_too_large', status: 422 });
    }
  });

  it('orders keys field by field in code-unit order and merges equal neighbours', () => {
    const rows = [
      { key: { bucket: 'b', alias: 'x' }, n: 1 },
      { key: { bucket: 'a', alias: 'y' }, n: 2 },
      { key: { bucket: 'b', alias: 'x' }, n: 3 },
      { key: { bucket: 'a' }, n: 4 },
    ];
    const merged = inKeyOrder(rows, (into, more) => {
      into.n += more.n;
    });
    expect(merged.map((row) => [row.key, row.n])).toEqual([
      [{ bucket: 'a' }, 4],
      [{ bucket: 'a', alias: 'y' }, 2],
      [{ bucket: 'b', alias: 'x' }, 4],
    ]);
    expect(compareSpendKeys({ alias: '\uffff' }, { alias: '\u{1F600}' })).toBe(1);
  });
});

describe('the group without an attribute', () => {
  const totals = (calls: number, committed: number) => ({
    calls,
    inputTokens: calls * 10,
    outputTokens: calls,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    committedMicrosUsd: committed,
    unknownAttempts: 0,
    unknownMicrosUsd: 0,
  });

  it('is each group total minus the values of the key, null first, values in order', () => {
    const all = [
      { key: { bucket: 'd1' }, totals: totals(5, 500) },
      { key: { bucket: 'd2' }, totals: totals(2, 20) },
    ];
    const attributed = [
      { key: { bucket: 'd1', attribute: 'ads' }, totals: totals(1, 30) },
      { key: { bucket: 'd1', attribute: '' }, totals: totals(1, 7) },
      { key: { bucket: 'd2', attribute: 'ads' }, totals: totals(2, 20) },
    ];
    expect(withUnattributed(all, attributed)).toEqual([
      { key: { bucket: 'd1', attribute: null }, totals: totals(3, 463) },
      { key: { bucket: 'd1', attribute: '' }, totals: totals(1, 7) },
      { key: { bucket: 'd1', attribute: 'ads' }, totals: totals(1, 30) },
      { key: { bucket: 'd2', attribute: 'ads' }, totals: totals(2, 20) },
    ]);
  });

  it('refuses an attribute sum larger than the total (a rollup out of step), never a negative figure', () => {
    expect(() =>
      withUnattributed(
        [{ key: {}, totals: totals(1, 10) }],
        [{ key: { attribute: 'x' }, totals: totals(2, 10) }],
      ),
    ).toThrow(/rollup/);
  });

  it('orders null before the empty value before any other', () => {
    expect(compareSpendKeys({ attribute: null }, { attribute: '' })).toBeLessThan(0);
    expect(compareSpendKeys({ attribute: '' }, { attribute: 'a' })).toBeLessThan(0);
    expect(compareSpendKeys({ attribute: 'b' }, { attribute: 'a' })).toBeGreaterThan(0);
  });
});
