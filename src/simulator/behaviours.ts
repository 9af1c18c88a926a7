/**
 * Which behaviour a simulated call gets. Resolution order, first match wins:
 *   1. counted entries (set with `times`), oldest first, matching the call's wire and/or model;
 *      a match decrements `times` and the entry disappears at zero;
 *   2. persistent entries by specificity: wire + model, model, wire, global;
 *   3. `{}` (the wire's defaults).
 * Setting a persistent entry for the same (wire, model) key replaces the previous one.
 */
import type { SimBehaviour } from './types.js';

export interface BehaviourMatch {
  model?: string | undefined;
  wire?: string | undefined;
  times?: number | undefined;
}

interface CountedEntry {
  behaviour: SimBehaviour;
  model: string | undefined;
  wire: string | undefined;
  remaining: number;
}

const ANY = '*';

export class BehaviourBook {
  private counted: CountedEntry[] = [];
  private readonly persistent = new Map<string, SimBehaviour>();

  set(behaviour: SimBehaviour, match: BehaviourMatch = {}): void {
    if (match.times !== undefined) {
      if (!Number.isInteger(match.times) || match.times < 1)
        throw new RangeError('times must be a positive integer');
      this.counted.push({ behaviour, model: match.model, wire: match.wire, remaining: match.times });
      return;
    }
    this.persistent.set(key(match.wire, match.model), behaviour);
  }

  reset(): void {
    this.counted = [];
    this.persistent.clear();
  }

  resolve(wire: string, model: string | undefined): SimBehaviour {
    if (this.counted.length > 0) {
      const index = this.counted.findIndex(
        (entry) =>
          (entry.wire === undefined || entry.wire === wire) &&
          (entry.model === undefined || entry.model === model),
      );
      const entry = this.counted[index];
      if (entry !== undefined) {
        entry.remaining -= 1;
        if (entry.remaining === 0) this.counted.splice(index, 1);
        return entry.behaviour;
      }
    }
    if (this.persistent.size === 0) return {};
    return (
      (model === undefined ? undefined : this.persistent.get(key(wire, model))) ??
      (model === undefined ? undefined : this.persistent.get(key(undefined, model))) ??
      this.persistent.get(key(wire, undefined)) ??
      this.persistent.get(key(undefined, undefined)) ??
      {}
    );
  }
}

function key(wire: string | undefined, model: string | undefined): string {
  return `${wire ?? ANY}\u0000${model ?? ANY}`;
}
