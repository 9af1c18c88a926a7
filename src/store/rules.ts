/**
 * Decisions both store adapters share. Kept pure so the SQLite and PostgreSQL adapters cannot
 * drift: they only differ in how they lock and write, never in what they decide.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { AttemptState, Outcome, Run, WorkUnit } from './port.js';

export interface SettlementAmounts {
  /** Cost added to the Run's committed total. */
  commit: number;
  /** Part of `commit` above the attempt's reservation. */
  overrun: number;
  /** 1 when the attempt counts in unknown_attempts. */
  unknown: number;
}

/** What settling an attempt does to its Run: settled commits the cost, unknown the reservation. */
export function settlementAmounts(
  state: Exclude<AttemptState, 'reserved'>,
  reservation: number,
  cost: number,
): SettlementAmounts {
  switch (state) {
    case 'settled':
      return { commit: cost, overrun: Math.max(0, cost - reservation), unknown: 0 };
    case 'unknown':
      return { commit: reservation, overrun: 0, unknown: 1 };
    case 'released':
      return { commit: 0, overrun: 0, unknown: 0 };
    default: {
      const never: never = state;
      throw new Error(`unknown settlement state ${String(never)}`);
    }
  }
}

/**
 * settlementAmounts as SQL expressions over the SQL expressions `state`, `reservation` and `cost`,
 * for a settlement written in one statement (postgres/ledger-at-once.ts). The same decision in the
 * database's words; postgres/ledger-at-once.test.ts checks the two agree on PostgreSQL.
 */
export function settlementAmountsSql(
  state: string,
  reservation: string,
  cost: string,
): Record<keyof SettlementAmounts, string> {
  return {
    commit: `CASE ${state} WHEN 'settled' THEN ${cost} WHEN 'unknown' THEN ${reservation} ELSE 0 END`,
    overrun: `CASE WHEN ${state} = 'settled' THEN greatest(0, ${cost} - ${reservation}) ELSE 0 END`,
    unknown: `CASE WHEN ${state} = 'unknown' THEN 1 ELSE 0 END`,
  };
}

/** Why a conditional reservation did not apply, from the Run as it is now. */
export function reserveFailure(run: Run | undefined, nowIso: string, amount: number): GatewayError {
  if (!run) return new GatewayError('run_not_found', 'Run not found.');
  if (run.status !== 'active') return new GatewayError('run_not_active', `Run ${run.id} is closed.`);
  if (run.expiresAt <= nowIso) return new GatewayError('run_not_active', `Run ${run.id} has expired.`);
  const remaining = run.budgetMicrosUsd - run.committedMicrosUsd - run.reservedMicrosUsd;
  return new GatewayError(
    'run_budget_exceeded',
    `The worst-case cost of this call (${amount} micro-USD) exceeds the Run's remaining budget (${Math.max(0, remaining)} micro-USD).`,
  );
}

/** Why a Run cannot be created on this Work Unit, or undefined when it can. */
export function runCreationFailure(
  workUnit: WorkUnit | undefined,
  runCount: number,
  maxRuns: number,
): GatewayError | undefined {
  if (!workUnit)
    return new GatewayError('work_unit_not_found', 'Work Unit not found.', { param: 'work_unit_id' });
  if (workUnit.status === 'closed') {
    return new GatewayError(
      'work_unit_closed',
      `Work Unit ${workUnit.id} is closed; no new Run can be created on it.`,
    );
  }
  if (runCount >= maxRuns) {
    return new GatewayError(
      'governance_resource_limit',
      `Work Unit ${workUnit.id} already has ${maxRuns} Runs, the maximum. Waiting does not clear this limit; use another Work Unit.`,
    );
  }
  return undefined;
}

/** Checks a report against the current head; returns the revision number the new record gets. */
export function nextRevision(
  head: Outcome | undefined,
  supersedesOutcomeId: string | null,
  maxRevisions: number,
): number {
  if (!head) {
    if (supersedesOutcomeId !== null) {
      throw new GatewayError(
        'outcome_revision_conflict',
        `supersedes_outcome_id ${supersedesOutcomeId} is not the current Outcome: there is no Outcome yet for this definition.`,
        { param: 'supersedes_outcome_id' },
      );
    }
    return 1;
  }
  if (supersedesOutcomeId !== head.id) {
    throw new GatewayError(
      'outcome_revision_conflict',
      supersedesOutcomeId === null
        ? `An Outcome already exists for this definition (${head.id}); send supersedes_outcome_id to revise it.`
        : `supersedes_outcome_id must name the current Outcome ${head.id}.`,
      { param: 'supersedes_outcome_id' },
    );
  }
  if (head.revision >= maxRevisions) {
    throw new GatewayError(
      'outcome_write_closed',
      `The Outcome already has ${maxRevisions} revisions, the maximum.`,
    );
  }
  return head.revision + 1;
}

/** Whether the Outcome write window of a Work Unit is still open at `nowMs`. */
export function outcomeWindowOpen(workUnit: WorkUnit, nowMs: number, writeWindowMs: number): boolean {
  if (workUnit.closedAt === null) return true;
  return nowMs <= Date.parse(workUnit.closedAt) + writeWindowMs;
}

export function idempotencyConflict(): GatewayError {
  return new GatewayError(
    'idempotency_conflict',
    'This Idempotency-Key was already used for a different request (method, path or body differ).',
  );
}
