/**
 * Admission against spend caps, decided while the counters are locked (PostgreSQL: SELECT ... FOR
 * UPDATE in counterOrder; SQLite: the one writer's transaction). Shared by both adapters so they
 * cannot drift, and usable by a batch that admits several reservations in arrival order: each
 * decision sees the counters as locked plus what the batch already admitted.
 */

import type { GatewayError } from '../errors/gateway-error.js';
import { type CapCounter, type CounterKey, capRefusal } from '../money/spend-caps.js';

export interface CounterUsage {
  committed: number;
  reserved: number;
}

export function counterId(counter: CounterKey): string {
  return `${counter.scope}\u0000${counter.ownerId}\u0000${counter.period}`;
}

/**
 * The one order in which every transaction locks counters: by scope, owner, period, compared as
 * code units (PostgreSQL sorts with COLLATE "C", which agrees for these ASCII identifiers).
 */
export function counterOrder<T extends CounterKey>(counters: readonly T[]): T[] {
  const unique = new Map(counters.map((counter) => [counterId(counter), counter]));
  return [...unique.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([, counter]) => counter);
}

export class CapTally {
  private readonly added = new Map<string, { counter: CounterKey; amount: number }>();

  constructor(private readonly locked: ReadonlyMap<string, CounterUsage>) {}

  /** The counter as locked plus what this tally has taken on it so far. */
  usage(counter: CounterKey): CounterUsage {
    const found = this.locked.get(counterId(counter)) ?? { committed: 0, reserved: 0 };
    return {
      committed: found.committed,
      reserved: found.reserved + (this.added.get(counterId(counter))?.amount ?? 0),
    };
  }

  /** The refusal naming the first counter (in the order given) that `amount` does not fit. */
  refusal(counters: readonly CapCounter[], amount: number): GatewayError | undefined {
    for (const counter of counters) {
      const usage = this.usage(counter);
      if (usage.committed + usage.reserved + amount > counter.limitMicrosUsd)
        return capRefusal(counter, usage, amount);
    }
    return undefined;
  }

  take(counters: readonly CounterKey[], amount: number): void {
    for (const counter of counters) {
      const id = counterId(counter);
      this.added.set(id, { counter, amount: (this.added.get(id)?.amount ?? 0) + amount });
    }
  }

  /** What to add to `reserved`, per counter, in counterOrder. */
  reservations(): Array<{ counter: CounterKey; amount: number }> {
    return counterOrder([...this.added.values()].map((entry) => ({ ...entry.counter, entry }))).map(
      ({ entry }) => entry,
    );
  }
}

export interface CounterSettlement {
  counter: CounterKey;
  /** Subtracted from reserved. */
  released: number;
  /** Added to committed. */
  committed: number;
}

/** Sums the settlements of several attempts per counter, in counterOrder. */
export function counterSettlements(
  attempts: ReadonlyArray<{ counters: readonly CounterKey[]; reservation: number; commit: number }>,
): CounterSettlement[] {
  const sums = new Map<string, CounterSettlement>();
  for (const attempt of attempts) {
    for (const counter of attempt.counters) {
      const sum = sums.get(counterId(counter)) ?? { counter, released: 0, committed: 0 };
      sum.released += attempt.reservation;
      sum.committed += attempt.commit;
      sums.set(counterId(counter), sum);
    }
  }
  return counterOrder([...sums.values()].map((sum) => ({ ...sum.counter, sum }))).map(({ sum }) => sum);
}
