/**
 * Settles a ledger attempt held by a background job (batch, deferred response) from whichever
 * process or request finishes it. The store makes settlement idempotent per attempt: the first
 * settlement wins and later ones are no-ops.
 */
import type { Settlement } from '../ledger/ledger.js';
import type { Store } from '../store/port.js';

export async function settleDurable(
  store: Store,
  attemptId: string,
  startedMs: number,
  nowMs: number,
  settlement: Settlement,
): Promise<void> {
  await store.settle({
    attemptId,
    ...settlement,
    durationMs: Math.max(0, nowMs - startedMs),
    settledAt: new Date(nowMs).toISOString(),
  });
}
