/** What every store contract suite needs: a fresh store per test and the code of a refusal. */
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from '../../lib/ids.js';
import type { SpendCaps } from '../../money/spend-caps.js';
import type { ReserveInput, Run, SettleInput, Store } from '../port.js';

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

/** Creates a managed key of `projectId` with the spend caps `limits`; returns its id. */
export async function createKey(
  store: Store,
  projectId: string,
  limits: SpendCaps,
  createdAt: string,
): Promise<string> {
  const id = newId('key');
  await store.keys.create(
    {
      id,
      projectId,
      secretHash: `hash-${id}`,
      scopes: ['inference'],
      label: null,
      createdAt,
      expiresAt: null,
      models: null,
      limits,
    },
    null,
    (record) => record,
  );
  return id;
}

/**
 * A reservation of 10 micro-USD by `attemptId`, attached to no Run, leased for a minute from now;
 * `fields` replace any of its fields.
 */
export function plainReservation(attemptId: string, fields: Partial<ReserveInput> = {}): ReserveInput {
  const now = Date.now();
  return {
    attemptId,
    projectId: 'prj_a',
    keyId: 'key_a',
    runId: null,
    reservationMicrosUsd: 10,
    now,
    createdAt: new Date(now).toISOString(),
    leaseExpiresAt: new Date(now + 60_000).toISOString(),
    owner: 'owner-1',
    endpoint: '/v1/messages',
    alias: 'demo',
    connection: 'sim',
    profile: 'vendora.messages.2023-06-01',
    upstreamModel: 'sim-1',
    ...fields,
  };
}

/** A completed settlement of `attemptId` at 4 micro-USD (1 input and 2 output tokens); `fields` replace any. */
export function completedSettlement(attemptId: string, fields: Partial<SettleInput> = {}): SettleInput {
  return {
    attemptId,
    state: 'settled',
    outcome: 'completed',
    costMicrosUsd: 4,
    usage: { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
    httpStatus: 200,
    durationMs: 5,
    settledAt: new Date().toISOString(),
    ...fields,
  };
}
