/** What every store contract suite needs: a fresh store per test and the code of a refusal. */
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { Run, Store } from '../port.js';

export interface StoreHarness {
  store: Store;
  cleanup(): Promise<void>;
}

/** 'ok' when the operation succeeds, else the GatewayError code it was refused with. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}

/** Creates an open Work Unit and an active Run on it with `budget`; returns the Run id. */
export async function createActiveRun(
  store: Store,
  projectId: string,
  budget: number,
  createdAt: string,
  expiresAt: string,
): Promise<string> {
  const workUnitId = newId('wku');
  const idempotency = (tag: string) => ({
    projectId,
    keyId: 'key_harness',
    key: `${tag}-${newId('att')}`,
    fingerprint: tag,
    createdAt,
    expiresAt,
  });
  const workUnit = {
    id: workUnitId,
    projectId,
    status: 'open' as const,
    createdAt,
    closedAt: null,
    definitions: [],
  };
  await store.createWorkUnit({ workUnit }, idempotency('wu'), (unit) => unit);
  const run: Run = {
    id: newId('run'),
    projectId,
    workUnitId,
    budgetMicrosUsd: budget,
    committedMicrosUsd: 0,
    reservedMicrosUsd: 0,
    overrunMicrosUsd: 0,
    unknownAttempts: 0,
    status: 'active',
    createdAt,
    expiresAt,
    closedAt: null,
    closeReason: null,
  };
  await store.createRun({ run, maxRunsPerWorkUnit: 32 }, idempotency('run'), (record) => record);
  return run.id;
}
