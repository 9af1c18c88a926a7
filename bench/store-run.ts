/**
 * A Work Unit and a Run in it, written straight to a store (no gateway): the Run the ledger
 * benchmarks reserve and settle on. Its budget (10^15 micro-dollars) is one no benchmark comes near,
 * so no call is refused and no threshold is crossed.
 */
import type { Store } from '../src/store/port.js';

const iso = (milliseconds: number) => new Date(milliseconds).toISOString();

export interface StoreRun {
  projectId: string;
  runId: string;
  workUnitId: string;
}

/** The part of the store port it writes through (a build's own store module satisfies it too). */
export type RunWriter = Pick<Store, 'createWorkUnit' | 'createRun'>;

export async function createStoreRun(
  store: RunWriter,
  { projectId, runId, workUnitId }: StoreRun,
): Promise<void> {
  const now = Date.now();
  const idempotency = (key: string) => ({
    projectId,
    keyId: 'key_bench',
    key: `${runId}-${key}`,
    fingerprint: 'f',
    createdAt: iso(now),
    expiresAt: iso(now + 1e9),
  });
  await store.createWorkUnit(
    {
      workUnit: {
        id: workUnitId,
        projectId,
        status: 'open',
        createdAt: iso(now),
        closedAt: null,
        definitions: [],
      },
    },
    idempotency('wu'),
    (unit) => unit,
  );
  await store.createRun(
    {
      run: {
        id: runId,
        projectId,
        workUnitId,
        budgetMicrosUsd: 1e15,
        committedMicrosUsd: 0,
        reservedMicrosUsd: 0,
        overrunMicrosUsd: 0,
        unknownAttempts: 0,
        status: 'active',
        createdAt: iso(now),
        expiresAt: iso(now + 1e9),
        closedAt: null,
        closeReason: null,
      },
      maxRunsPerWorkUnit: 32,
    },
    idempotency('run'),
    (run) => run,
  );
}
