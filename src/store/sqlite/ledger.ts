/**
 * The ledger on SQLite. One writer (the process lock) and serial transactions, so exactness follows
 * from serial execution:
 * - reservations and settlements go through the group commit (group-commit.ts); settleAndRead, the
 *   reaper and releaseInDoubt run in a transaction of their own. Every path writes through the same
 *   functions below (reserveInTransaction, settleInTransaction), so each ledger statement is written
 *   once on this dialect;
 * - admission is one conditional UPDATE of the Run (active, not expired, committed + reserved +
 *   amount <= budget); spend caps (caps.ts) are decided before anything is written, so a refused
 *   item of a group writes nothing;
 * - a settlement is one conditional UPDATE of the attempt (state 'reserved'), then the Run, the
 *   spend counters and the audit entry.
 */
import { StoreUnavailableError } from '../../errors/gateway-error.js';
import { isoTime } from '../../lib/clock.js';
import {
  counterKeys,
  recordedCounters,
  reservationCounters,
  type SpendCaps,
} from '../../money/spend-caps.js';
import { thresholdsCrossed, windowOfPeriod } from '../../money/thresholds.js';
import { CapTally, counterSettlements } from '../cap-tally.js';
import {
  attemptUnknownFromRow,
  capThresholdEvent,
  type RunFigures,
  runDepletedEvent,
  runThresholdEvent,
} from '../event-builders.js';
import type { ReapedAttempt, ReserveInput, SettledAttempt, SettleInput } from '../port.js';
import type { NewEvent } from '../records.js';
import { type Row, runFromRow, settledAttemptFromRow } from '../rows.js';
import { reserveFailure, settlementAmounts } from '../rules.js';
import { addReservations, counterUsage, keyCaps, settleCounters } from './caps.js';
import type { WalCheckpointer } from './checkpointer.js';
import { appendEventsIn } from './events.js';
import { runRow } from './governance.js';
import { SqliteGroupCommit } from './group-commit.js';
import type { Sql, SqliteTransaction } from './transaction.js';

/** An object as the JSON text column holds it; null stays null. */
const jsonText = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

/**
 * A reservation that failed as unavailable (a full disk, an I/O error at COMMIT): this process is
 * the file's only writer, so one read says whether it committed. Absent: uncommitted, nothing to
 * resolve (StoreUnavailableError.uncommitted). Present, or the read fails too: left in doubt for
 * the ledger, which releases it (Store.releaseInDoubt).
 */
function settledDoubt(sql: Sql, error: unknown, attemptId: string): unknown {
  if (!(error instanceof StoreUnavailableError) || error.uncommitted) return error;
  try {
    if (sql('SELECT 1 FROM attempts WHERE id = ?').get(attemptId) !== undefined) return error;
  } catch {
    return error;
  }
  return new StoreUnavailableError(error.message, { cause: error.cause, uncommitted: true });
}

/** A Run's figures from its row (the whole row, or the admission's RETURNING columns). */
function runFigures(runId: string, projectId: string, row: Row): RunFigures {
  return {
    runId,
    projectId,
    workUnitId: String(row.work_unit_id),
    budget: Number(row.budget),
    committed: Number(row.committed),
    reserved: Number(row.reserved),
  };
}

/** The Run's admission: reserves `amount` when the Run is active, unexpired and has room for it. */
const RUN_ADMISSION = `UPDATE runs SET reserved = reserved + ?
   WHERE id = ? AND project_id = ? AND status = 'active' AND expires_at > ? AND committed + reserved + ? <= budget`;
/** The admission returning the Run's figures after it, for the exact threshold comparison. */
const RUN_ADMISSION_RETURNING = `${RUN_ADMISSION} RETURNING work_unit_id, budget, committed, reserved`;
const admissionsCrossingNothing: string[] = [];
/** The Runs whose audit attribution the ledger keeps at most (a few hundred bytes each). */
const RUN_ATTRIBUTIONS_KEPT = 10_000;

/**
 * The admission, only for a reservation that certainly crosses none of `count` Run thresholds: for
 * each, the Run's committed + reserved before it stays more than one micro-dollar above the level
 * (`threshold * budget`), or after it more than one below. Exact crossings are decided in
 * JavaScript (money/thresholds.ts); the margin only sends borderline calls there. One string per
 * count, built once (the statement cache is keyed by the text).
 */
function admissionCrossingNothing(count: number): string {
  let text = admissionsCrossingNothing[count];
  if (text === undefined) {
    const one = 'NOT (committed + reserved < ? * budget + 1 AND ? * budget - 1 <= committed + reserved + ?)';
    text = `${RUN_ADMISSION} AND ${Array.from({ length: count }, () => one).join(' AND ')}`;
    admissionsCrossingNothing[count] = text;
  }
  return text;
}

function crossingValues(thresholds: readonly number[], amount: number): number[] {
  const values: number[] = [];
  for (const threshold of thresholds) values.push(threshold, threshold, amount);
  return values;
}

export class SqliteLedger {
  private readonly groupCommit: SqliteGroupCommit;
  /**
   * The attempts this process reserved and has not settled, as their rows read (the columns a
   * settlement uses): a settlement takes the row from here instead of reading it back. The process
   * lock makes this process the file's only writer, and the settlement's conditional update still
   * decides, so an entry is only ever a shortcut; one that is missing (a restart, a reservation of
   * a rolled-back batch) is read from the table as before.
   */
  private readonly openAttempts = new Map<string, Row>();
  /**
   * The keys' spend caps read by the ledger batch being committed, by key id. A batch is one
   * transaction and no key is written inside it, so a key's caps read once hold for the whole batch;
   * the map lives only while the batch runs (a key changed between batches is read again).
   */
  private batchKeyCaps: Map<string, SpendCaps> | undefined;
  /**
   * Each Run's Work Unit id and merged metadata, as settlements write them into the audit. Neither
   * changes after the Run is created (no statement updates a Run's Work Unit or either metadata),
   * so an entry never goes stale; the map is emptied when it reaches RUN_ATTRIBUTIONS_KEPT Runs.
   */
  private readonly runAttributions = new Map<string, Row>();

  constructor(
    private readonly sql: Sql,
    private readonly transaction: SqliteTransaction,
    checkpointer: () => WalCheckpointer | undefined,
  ) {
    this.groupCommit = new SqliteGroupCommit(transaction, checkpointer, (commit) => {
      this.batchKeyCaps = new Map();
      try {
        commit();
      } finally {
        this.batchKeyCaps = undefined;
      }
    });
  }

  reserve(input: ReserveInput): Promise<void> {
    const reserved = this.groupCommit.submit(() => this.reserveInTransaction(input));
    // A batch that did not commit wrote no row: forget what its work remembered.
    return reserved.catch((error: unknown) => {
      this.openAttempts.delete(input.attemptId);
      throw settledDoubt(this.sql, error, input.attemptId);
    });
  }

  settle(input: SettleInput): Promise<void> {
    return this.groupCommit.submit(() => {
      this.settleInTransaction(input);
    });
  }

  settleAndRead(input: SettleInput): SettledAttempt | undefined {
    return this.transaction(() => {
      const settled = this.settleInTransaction(input);
      return settled && settledAttemptFromRow(settled.attempt, settled.committed);
    });
  }

  renewLease(attemptId: string, leaseExpiresAt: string): void {
    this.transaction(() => {
      this.sql("UPDATE attempts SET lease_expires_at = ? WHERE id = ? AND state = 'reserved'").run(
        leaseExpiresAt,
        attemptId,
      );
    });
  }

  reapExpiredAttempts(nowIso: string, liveOwner?: string): ReapedAttempt[] {
    return this.transaction(() => {
      const orphans = (
        liveOwner === undefined
          ? this.sql(
              "SELECT id, created_at FROM attempts WHERE state = 'reserved' AND lease_expires_at <= ?",
            ).all(nowIso)
          : this.sql(
              // Attempts owned by a durable job ('job:...') survive the process; only their lease reaps them.
              "SELECT id, created_at FROM attempts WHERE state = 'reserved' AND (lease_expires_at <= ? OR (owner <> ? AND owner NOT LIKE 'job:%'))",
            ).all(nowIso, liveOwner)
      ) as Row[];
      const reaped: ReapedAttempt[] = [];
      for (const row of orphans) {
        const attemptId = String(row.id);
        const durationMs = Math.max(0, Date.parse(nowIso) - Date.parse(String(row.created_at)));
        const settled = this.settleInTransaction({
          attemptId,
          state: 'unknown',
          costMicrosUsd: 0,
          usage: null,
          outcome: 'lease_expired',
          httpStatus: null,
          durationMs,
          settledAt: nowIso,
        });
        if (settled)
          reaped.push({
            ...settledAttemptFromRow(settled.attempt, settled.committed),
            attemptId,
            durationMs,
          });
      }
      return reaped;
    });
  }

  /**
   * One transaction. SQLite has no link to lose, but reserve() still fails as unavailable (a busy or
   * full file, a failed commit), so the ledger resolves those reservations the same way.
   */
  releaseInDoubt(inputs: ReserveInput[], settledAt: string): ReapedAttempt[] {
    return this.transaction(() => {
      const released: ReapedAttempt[] = [];
      for (const input of inputs) {
        const exists = this.sql('SELECT 1 FROM attempts WHERE id = ?').get(input.attemptId);
        if (exists === undefined) {
          this.sql(
            `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, cost, lease_expires_at, owner,
               endpoint, alias, connection, profile, upstream_model, created_at, settled_at, outcome)
             VALUES (?, ?, ?, NULL, 'released', 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'not_sent')`,
          ).run(
            input.attemptId,
            input.projectId,
            input.keyId,
            input.createdAt,
            input.owner,
            input.endpoint,
            input.alias,
            input.connection,
            input.profile,
            input.upstreamModel,
            input.createdAt,
            settledAt,
          );
          continue;
        }
        const durationMs = Math.max(0, Date.parse(settledAt) - Date.parse(input.createdAt));
        const settled = this.settleInTransaction({
          attemptId: input.attemptId,
          state: 'released',
          outcome: 'not_sent',
          costMicrosUsd: 0,
          usage: null,
          httpStatus: null,
          durationMs,
          settledAt,
        });
        if (settled)
          released.push({
            ...settledAttemptFromRow(settled.attempt, settled.committed),
            attemptId: input.attemptId,
            durationMs,
          });
      }
      return released;
    });
  }

  /**
   * The Work Unit and metadata a Run's audit entries carry (its Work Unit's metadata overlaid by its
   * own), read at the Run's first settlement in this process and kept (see `runAttributions`).
   */
  private runAttribution(runId: string): Row | undefined {
    let attribution = this.runAttributions.get(runId);
    if (attribution === undefined) {
      attribution = this.sql(
        `SELECT r.work_unit_id, json_patch(coalesce(w.metadata, '{}'), coalesce(r.metadata, '{}')) AS metadata
         FROM runs r JOIN work_units w ON w.id = r.work_unit_id WHERE r.id = ?`,
      ).get(runId) as Row | undefined;
      if (attribution === undefined) return undefined;
      if (this.runAttributions.size >= RUN_ATTRIBUTIONS_KEPT) this.runAttributions.clear();
      this.runAttributions.set(runId, attribution);
    }
    return attribution;
  }

  /** A key's spend caps, read once per ledger batch (see `batchKeyCaps`). */
  private keyCapsInBatch(keyId: string): SpendCaps {
    let caps = this.batchKeyCaps?.get(keyId);
    if (caps === undefined) {
      caps = keyCaps(this.sql, keyId);
      this.batchKeyCaps?.set(keyId, caps);
    }
    return caps;
  }

  /** Admits a reservation (Run, then spend caps) and inserts its attempt; a refusal writes nothing. */
  private reserveInTransaction(input: ReserveInput): void {
    const nowIso = isoTime(input.now);
    const counters = reservationCounters(
      input.projectId,
      input.projectCaps,
      input.keyId,
      this.keyCapsInBatch(input.keyId),
      input.now,
    );
    // Decide every cap before writing anything (a refused item of the group commit writes nothing).
    const tally = new CapTally(counterUsage(this.sql, counters));
    const capRefusal = tally.refusal(counters, input.reservationMicrosUsd);
    const thresholds = input.eventThresholds;
    let runAfter: Row | undefined;
    if (input.runId !== null) {
      const values = [
        input.reservationMicrosUsd,
        input.runId,
        input.projectId,
        nowIso,
        input.reservationMicrosUsd,
      ];
      // With Run thresholds configured, a reservation that surely crosses none is admitted by the
      // plain UPDATE (the margin is checked in its WHERE); any other is tried again by the same
      // UPDATE returning the Run's figures, and compared exactly (thresholdEvents).
      let admitted = false;
      if (thresholds && thresholds.run.length > 0) {
        admitted =
          this.sql(admissionCrossingNothing(thresholds.run.length)).run(
            ...values,
            ...crossingValues(thresholds.run, input.reservationMicrosUsd),
          ).changes === 1;
        if (!admitted) {
          runAfter = this.sql(RUN_ADMISSION_RETURNING).get(...values) as Row | undefined;
          admitted = runAfter !== undefined;
        }
      } else admitted = this.sql(RUN_ADMISSION).run(...values).changes === 1;
      if (!admitted) {
        const row = runRow(this.sql, input.projectId, input.runId);
        const run = row ? runFromRow(row) : undefined;
        const failure = reserveFailure(run, nowIso, input.reservationMicrosUsd);
        // The first refusal for the Run's budget writes run.depleted (the refusal itself writes nothing else).
        if (run && failure.code === 'run_budget_exceeded')
          appendEventsIn(this.sql, [
            runDepletedEvent(
              runFigures(run.id, run.projectId, row!),
              input.reservationMicrosUsd,
              input.createdAt,
            ),
          ]);
        throw failure;
      }
    }
    if (capRefusal) {
      // Only a cap refuses (the Run would have been named first): undo the Run's reservation.
      if (input.runId !== null)
        this.sql('UPDATE runs SET reserved = reserved - ? WHERE id = ?').run(
          input.reservationMicrosUsd,
          input.runId,
        );
      throw capRefusal;
    }
    if (thresholds) {
      const events = this.thresholdEvents(input, runAfter, counters, tally);
      if (events.length > 0) appendEventsIn(this.sql, events);
    }
    tally.take(counters, input.reservationMicrosUsd);
    addReservations(this.sql, tally.reservations());
    const capCounters = counters.length === 0 ? null : JSON.stringify(counterKeys(counters));
    const attribution = input.attribution;
    const callId = attribution?.callId ?? null;
    const tags = jsonText(attribution?.tags);
    const route = jsonText(attribution?.route);
    const traceId = attribution?.traceId ?? null;
    this.sql(
      `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint, alias,
         connection, profile, upstream_model, created_at, cap_counters, call_id, tags, route, trace_id)
       VALUES (?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.attemptId,
      input.projectId,
      input.keyId,
      input.runId,
      input.reservationMicrosUsd,
      input.leaseExpiresAt,
      input.owner,
      input.endpoint,
      input.alias,
      input.connection,
      input.profile,
      input.upstreamModel,
      input.createdAt,
      capCounters,
      callId,
      tags,
      route,
      traceId,
    );
    this.openAttempts.set(input.attemptId, {
      state: 'reserved',
      reservation: input.reservationMicrosUsd,
      project_id: input.projectId,
      key_id: input.keyId,
      run_id: input.runId,
      endpoint: input.endpoint,
      alias: input.alias,
      connection: input.connection,
      profile: input.profile,
      upstream_model: input.upstreamModel,
      created_at: input.createdAt,
      cap_counters: capCounters,
      call_id: callId,
      tags,
      route,
      trace_id: traceId,
    });
  }

  /**
   * The threshold events this reservation crosses (decided before the cap tally takes it): the
   * Run's from its figures after the admission, each cap counter's from its usage before and after.
   */
  private thresholdEvents(
    input: ReserveInput,
    runAfter: Row | undefined,
    counters: ReturnType<typeof reservationCounters>,
    tally: CapTally,
  ): NewEvent[] {
    const thresholds = input.eventThresholds!;
    const amount = input.reservationMicrosUsd;
    const events: NewEvent[] = [];
    if (runAfter && input.runId !== null) {
      const run = runFigures(input.runId, input.projectId, runAfter);
      const after = run.committed + run.reserved;
      for (const threshold of thresholdsCrossed(thresholds.run, run.budget, after - amount, after))
        events.push(runThresholdEvent(run, threshold, input.createdAt));
    }
    if (thresholds.caps.length > 0) {
      for (const counter of counters) {
        const usage = tally.usage(counter);
        const before = usage.committed + usage.reserved;
        const crossed = thresholdsCrossed(thresholds.caps, counter.limitMicrosUsd, before, before + amount);
        for (const threshold of crossed)
          events.push(
            capThresholdEvent(
              {
                scope: counter.scope,
                ownerId: counter.ownerId,
                projectId: input.projectId,
                period: counter.period,
                cap: counter.limitMicrosUsd,
                committed: usage.committed,
                reserved: usage.reserved + amount,
              },
              windowOfPeriod(counter.period),
              threshold,
              input.createdAt,
            ),
          );
      }
    }
    return events;
  }

  /**
   * Settles a reserved attempt: its row as it was reserved and what the settlement committed;
   * undefined (nothing written) when it is settled already.
   */
  private settleInTransaction(input: SettleInput): { attempt: Row; committed: number } | undefined {
    const attempt =
      this.openAttempts.get(input.attemptId) ??
      (this.sql('SELECT * FROM attempts WHERE id = ?').get(input.attemptId) as Row | undefined);
    // Forgotten before the writes: if the batch rolls back, a retry reads the row.
    this.openAttempts.delete(input.attemptId);
    if (attempt?.state !== 'reserved') return undefined;
    const reservation = Number(attempt.reservation);
    const amounts = settlementAmounts(input.state, reservation, input.costMicrosUsd);
    const changed = this.sql(
      "UPDATE attempts SET state = ?, cost = ?, settled_at = ?, outcome = ? WHERE id = ? AND state = 'reserved'",
    ).run(input.state, amounts.commit, input.settledAt, input.outcome, input.attemptId).changes;
    if (changed !== 1) return undefined;
    if (attempt.run_id !== null) {
      this.sql(
        `UPDATE runs SET reserved = reserved - ?, committed = committed + ?, overrun = overrun + ?,
           unknown_attempts = unknown_attempts + ? WHERE id = ?`,
      ).run(reservation, amounts.commit, amounts.overrun, amounts.unknown, attempt.run_id);
    }
    settleCounters(
      this.sql,
      counterSettlements([
        { counters: recordedCounters(attempt.cap_counters), reservation, commit: amounts.commit },
      ]),
    );
    const run = attempt.run_id === null ? undefined : this.runAttribution(String(attempt.run_id));
    this.sql(
      `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
         reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome,
         http_status, duration_ms, overran, created_at, settled_at, work_unit_id, metadata, call_id, tags, route,
         trace_id, first_byte_ms, upstream_request_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.attemptId,
      attempt.project_id,
      attempt.key_id,
      attempt.run_id,
      attempt.endpoint,
      attempt.alias,
      attempt.connection,
      attempt.profile,
      attempt.upstream_model,
      input.state,
      reservation,
      amounts.commit,
      input.usage?.inputTokens ?? null,
      input.usage?.outputTokens ?? null,
      input.usage?.cacheCreationInputTokens ?? null,
      input.usage?.cacheReadInputTokens ?? null,
      input.outcome,
      input.httpStatus,
      Math.round(input.durationMs),
      amounts.overrun > 0 ? 1 : 0,
      attempt.created_at,
      input.settledAt,
      run?.work_unit_id ?? null,
      run?.metadata ?? null,
      attempt.call_id ?? null,
      attempt.tags ?? null,
      attempt.route ?? null,
      attempt.trace_id ?? null,
      input.firstByteMs === null || input.firstByteMs === undefined ? null : Math.round(input.firstByteMs),
      input.upstreamRequestId ?? null,
    );
    if (input.state === 'unknown')
      appendEventsIn(this.sql, [
        attemptUnknownFromRow(attempt, input.attemptId, input.outcome, amounts.commit, input.settledAt),
      ]);
    return { attempt, committed: amounts.commit };
  }
}
