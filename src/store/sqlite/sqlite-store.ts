/**
 * SQLite adapter (embedded default). better-sqlite3 is synchronous and this process is the only
 * writer (an advisory lock file refuses a second process), so every operation is one
 * `BEGIN IMMEDIATE` transaction and operations are serial: exactness follows from serial execution.
 * WAL with synchronous=NORMAL survives a process crash; `full` also survives power loss.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { GatewayError, StoreUnavailableError } from '../../errors/gateway-error.js';
import { isoTime } from '../../lib/clock.js';
import {
  counterKeys,
  recordedCounters,
  reservationCounters,
  type SpendCaps,
} from '../../money/spend-caps.js';
import { CapTally, counterSettlements } from '../cap-tally.js';
import type {
  AuditEntry,
  AuditQuery,
  CloseRunInput,
  CloseWorkUnitInput,
  CreateRunInput,
  CreateWorkUnitInput,
  Idempotency,
  IdempotentResult,
  KeyRecord,
  NewKey,
  Outcome,
  OutcomeDefinition,
  ReapedAttempt,
  Render,
  ReportOutcomeInput,
  ReserveInput,
  Run,
  SettledAttempt,
  SettleInput,
  Store,
  WorkUnit,
  WorkUnitView,
} from '../port.js';
import {
  auditFromRow,
  keyFromRow,
  outcomeFromRow,
  type Row,
  runFromRow,
  settledAttemptFromRow,
  workUnitFromRow,
} from '../rows.js';
import {
  idempotencyConflict,
  nextRevision,
  outcomeWindowOpen,
  reserveFailure,
  runCreationFailure,
  settlementAmounts,
} from '../rules.js';
import { SqliteBatches } from './batches.js';
import { addReservations, counterUsage, keyCaps, settleCounters } from './caps.js';
import { WalCheckpointer } from './checkpointer.js';
import { SqliteDeferredResponses } from './deferred-responses.js';
import { SqliteFilesRepository } from './files.js';
import { SqliteJobs } from './jobs.js';
import { SqliteKeys } from './keys.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { acquireProcessLock, type ProcessLock } from './process-lock.js';
import { SqliteRateBuckets } from './rate-buckets.js';
import { SqliteReports } from './reports.js';

export interface SqliteOptions {
  path: string;
  synchronous: 'normal' | 'full';
  /**
   * Take the one-writer lock file (the gateway does). Short-lived CLI commands that touch no
   * budget (keys, audit) open the file without it and rely on SQLite's own locking.
   */
  exclusive?: boolean;
}

type Write<T> = { record: T; status: 200 | 201 };

/** How often the checkpoint worker folds the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 1000;
/** The WAL file is truncated to this size when the writer rewinds it. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly lock: ProcessLock | undefined;
  private checkpointer: WalCheckpointer | undefined;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly ledgerQueue: Array<{
    work: () => void;
    resolve: () => void;
    reject: (error: unknown) => void;
  }> = [];
  /** A group-commit flush is scheduled for this turn of the event loop. */
  private ledgerTurnScheduled = false;
  /** Ledger writes of the current turn, and of the last one (one alone: the next commits at once). */
  private ledgerTurnWrites = 0;
  private lastTurnWrites = 0;
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
  /** One transaction wrapper for every write (creating one per call costs more than a small write). */
  private readonly inTransaction: Database.Transaction<(work: () => unknown) => unknown>;
  readonly files: SqliteFilesRepository;
  readonly jobs: SqliteJobs;
  readonly batches: SqliteBatches;
  readonly deferredResponses: SqliteDeferredResponses;
  readonly rateBuckets: SqliteRateBuckets;
  readonly reports: SqliteReports;
  readonly keys: SqliteKeys;

  constructor(options: SqliteOptions) {
    if (options.path !== ':memory:') {
      mkdirSync(dirname(options.path), { recursive: true });
      if (options.exclusive !== false) this.lock = acquireProcessLock(`${options.path}.lock`);
    }
    try {
      this.db = new Database(options.path);
      // 1 KiB pages for a new file (an existing file keeps its own: docs/operations.md): a ledger
      // commit writes every page it touched to the WAL, and its rows are small, so smaller pages
      // make each commit cheaper (bench/ledger.ts: c1 -30 %, c64 -10 % CPU per reserve + settle).
      this.db.pragma('page_size = 1024');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('foreign_keys = ON');
      this.db.pragma('busy_timeout = 5000');
      // A page cache (4 MiB) for the ledger's working set: the Runs, the open attempts and the
      // right edge of the append-only tables and their indexes. Not more: a B-tree split that
      // reorders its new pages renumbers one through the lock page's number (page 1,048,577 at
      // 1 KiB), and the commit after it then scans the cache's whole hash table, whose size
      // follows the pages cached. With 16 MiB a reservation and settlement cost 1.5-2 us more on a
      // ledger of 200,000 calls (bench/ledger.ts), and the RSS is larger.
      this.db.pragma('cache_size = -4096');
      if (options.exclusive !== false) {
        // No checkpoint on the event loop: a worker thread with its own connection does them
        // (checkpointer.ts), so their fsync never lands on a request's latency.
        this.db.pragma('wal_autocheckpoint = 0');
        this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
        if (options.path !== ':memory:') {
          this.checkpointer = new WalCheckpointer(options.path, CHECKPOINT_INTERVAL_MS, (reason) =>
            this.checkpointerFailed(reason),
          );
        }
      }
    } catch (error) {
      this.lock?.release();
      throw error;
    }
    this.inTransaction = this.db.transaction((work: () => unknown) => work());
    this.files = new SqliteFilesRepository(this.db, (work) => this.transaction(work));
    this.jobs = new SqliteJobs(this.db, (work) => this.transaction(work));
    this.batches = new SqliteBatches(this.db, (work) => this.transaction(work));
    this.deferredResponses = new SqliteDeferredResponses(this.db, (work) => this.transaction(work));
    this.rateBuckets = new SqliteRateBuckets(this.db, (work) => this.transaction(work));
    this.reports = new SqliteReports(
      this.db,
      (query) => this.read(query),
      (work) => this.transaction(work),
      (text) => this.sql(text),
    );
    this.keys = new SqliteKeys(
      this.db,
      (work) => this.transaction(work),
      (idempotency, render, write) => this.idempotent(idempotency, render, write),
    );
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Runs `work` in a BEGIN IMMEDIATE transaction; driver failures become StoreUnavailableError. */
  private transaction<T>(work: () => T): T {
    try {
      return this.inTransaction.immediate(work) as T;
    } catch (error) {
      if (error instanceof Database.SqliteError && !error.code.startsWith('SQLITE_CONSTRAINT')) {
        throw new StoreUnavailableError(`sqlite: ${error.code}`);
      }
      throw this.closedError(error);
    }
  }

  /**
   * The checkpoint worker ended on its own: without it nothing would fold the WAL back and the file
   * would grow until a restart. The main connection checkpoints again as SQLite does by default
   * (every 1000 pages, inside a commit: the fsync is back on the event loop, the stall the worker
   * exists to avoid), and the process says so on stderr; a restart brings the worker back.
   */
  private checkpointerFailed(reason: string): void {
    this.checkpointer = undefined;
    if (!this.db.open) return;
    this.db.pragma('wal_autocheckpoint = 1000');
    process.emitWarning(
      `SQLite checkpoint worker stopped (${reason}); checkpoints run on the main connection until restart`,
      { code: 'SVC_SQLITE_CHECKPOINTER' },
    );
  }

  /** A closed database throws a plain TypeError from the driver: that is "unavailable", not a bug. */
  private closedError(error: unknown): unknown {
    return this.db.open ? error : new StoreUnavailableError('sqlite: the database is closed');
  }

  async migrate(): Promise<void> {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map(
        (row) => row.version,
      ),
    );
    for (const migration of SQLITE_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      this.transaction(() => {
        this.db.exec(migration.sql);
        migration.apply?.(this.db);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString());
      });
    }
  }

  async ping(): Promise<void> {
    try {
      this.sql('SELECT 1').get();
    } catch (error) {
      throw new StoreUnavailableError(`sqlite: ${(error as Error).message}`);
    }
  }

  private checkpoint(): void {
    try {
      if (this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // busy or closing: the next tick tries again
    }
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    if (this.db.open) {
      this.checkpoint();
      this.db.close();
    }
    this.lock?.release();
  }

  // ---- keys --------------------------------------------------------------------------------

  async createKey(key: NewKey): Promise<void> {
    this.transaction(() => {
      this.sql(
        'INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt);
    });
  }

  async upsertConfiguredKey(key: NewKey): Promise<void> {
    this.transaction(() => {
      this.sql(
        `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, secret_hash = excluded.secret_hash,
           scopes = excluded.scopes, label = excluded.label`,
      ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt);
    });
  }

  async insertKeyIfAbsent(key: NewKey): Promise<boolean> {
    return this.transaction(
      () =>
        this.sql(
          `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO NOTHING`,
        ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt)
          .changes === 1,
    );
  }

  async findKeyByHash(secretHash: string): Promise<KeyRecord | undefined> {
    const row = this.read(() => this.sql('SELECT * FROM gateway_keys WHERE secret_hash = ?').get(secretHash));
    return row ? keyFromRow(row as Row) : undefined;
  }

  async listKeys(projectId?: string): Promise<KeyRecord[]> {
    const rows = this.read(() =>
      projectId === undefined
        ? this.sql('SELECT * FROM gateway_keys ORDER BY created_at, id').all()
        : this.sql('SELECT * FROM gateway_keys WHERE project_id = ? ORDER BY created_at, id').all(projectId),
    );
    return (rows as Row[]).map(keyFromRow);
  }

  async revokeKey(id: string, revokedAt: string): Promise<boolean> {
    return this.transaction(() => {
      const result = this.sql(
        'UPDATE gateway_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?',
      ).run(revokedAt, id);
      return result.changes > 0;
    });
  }

  // ---- outcome definitions -----------------------------------------------------------------

  async syncDefinitions(definitions: OutcomeDefinition[]): Promise<void> {
    this.transaction(() => {
      for (const definition of definitions) {
        this.sql(
          `INSERT INTO outcome_definitions (project_id, id, version, kind, allowed_values, enabled) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (project_id, id, version) DO UPDATE SET enabled = excluded.enabled`,
        ).run(
          definition.projectId,
          definition.id,
          definition.version,
          definition.kind,
          JSON.stringify(definition.allowedValues),
          definition.enabled ? 1 : 0,
        );
      }
    });
  }

  async listDefinitions(projectId: string): Promise<OutcomeDefinition[]> {
    const rows = this.read(() =>
      this.sql('SELECT * FROM outcome_definitions WHERE project_id = ? ORDER BY id, version').all(projectId),
    ) as Row[];
    return rows.map((row) => ({
      projectId: String(row.project_id),
      id: String(row.id),
      version: Number(row.version),
      kind: row.kind as OutcomeDefinition['kind'],
      allowedValues: JSON.parse(String(row.allowed_values)) as Array<string | boolean>,
      enabled: Number(row.enabled) === 1,
    }));
  }

  // ---- governance writes -------------------------------------------------------------------

  /** One transaction: replay or conflict on a known key, else do the write and store its response. */
  private idempotent<T>(
    idempotency: Idempotency,
    render: Render<T>,
    write: () => Write<T>,
  ): IdempotentResult {
    return this.transaction(() => {
      const stored = this.sql(
        'SELECT fingerprint, response, expires_at FROM idempotency WHERE project_id = ? AND key_id = ? AND idempotency_key = ?',
      ).get(idempotency.projectId, idempotency.keyId, idempotency.key) as Row | undefined;
      if (stored && String(stored.expires_at) > idempotency.createdAt) {
        if (stored.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
        return { status: 200, replayed: true, body: JSON.parse(String(stored.response)) };
      }
      const { record, status } = write();
      const body = render(record);
      this.sql(
        `INSERT INTO idempotency (project_id, key_id, idempotency_key, fingerprint, status, response, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint,
           status = excluded.status, response = excluded.response, created_at = excluded.created_at, expires_at = excluded.expires_at`,
      ).run(
        idempotency.projectId,
        idempotency.keyId,
        idempotency.key,
        idempotency.fingerprint,
        status,
        JSON.stringify(body),
        idempotency.createdAt,
        idempotency.expiresAt,
      );
      return { status, replayed: false, body };
    });
  }

  async createWorkUnit(
    input: CreateWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => {
      const unit = input.workUnit;
      this.sql(
        'INSERT INTO work_units (id, project_id, status, created_at, closed_at, definitions) VALUES (?, ?, ?, ?, NULL, ?)',
      ).run(unit.id, unit.projectId, unit.status, unit.createdAt, JSON.stringify(unit.definitions));
      return { record: unit, status: 201 };
    });
  }

  async closeWorkUnit(
    input: CloseWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => {
      const unit = this.workUnitRow(input.projectId, input.id);
      if (!unit) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
      if (unit.status === 'closed') return { record: unit, status: 200 };
      this.sql("UPDATE work_units SET status = 'closed', closed_at = ? WHERE id = ?").run(
        input.closedAt,
        input.id,
      );
      return { record: { ...unit, status: 'closed' as const, closedAt: input.closedAt }, status: 201 };
    });
  }

  async createRun(
    input: CreateRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => {
      const run = input.run;
      const unitRow = this.sql('SELECT * FROM work_units WHERE id = ? AND project_id = ?').get(
        run.workUnitId,
        run.projectId,
      ) as Row | undefined;
      const failure = runCreationFailure(
        unitRow ? workUnitFromRow(unitRow) : undefined,
        unitRow ? Number(unitRow.run_count) : 0,
        input.maxRunsPerWorkUnit,
      );
      if (failure) throw failure;
      this.sql('UPDATE work_units SET run_count = run_count + 1 WHERE id = ?').run(run.workUnitId);
      this.sql(
        `INSERT INTO runs (id, project_id, work_unit_id, budget, status, created_at, expires_at)
         VALUES (?, ?, ?, ?, 'active', ?, ?)`,
      ).run(run.id, run.projectId, run.workUnitId, run.budgetMicrosUsd, run.createdAt, run.expiresAt);
      return { record: run, status: 201 };
    });
  }

  async closeRun(
    input: CloseRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => {
      const row = this.sql('SELECT * FROM runs WHERE id = ? AND project_id = ?').get(
        input.id,
        input.projectId,
      ) as Row | undefined;
      if (!row) throw new GatewayError('run_not_found', 'Run not found.');
      const run = runFromRow(row);
      if (run.status === 'closed') return { record: run, status: 200 };
      if (run.expiresAt <= input.closedAt)
        throw new GatewayError('run_not_active', `Run ${run.id} has expired.`);
      this.sql("UPDATE runs SET status = 'closed', closed_at = ?, close_reason = ? WHERE id = ?").run(
        input.closedAt,
        input.reason,
        input.id,
      );
      return {
        record: { ...run, status: 'closed' as const, closedAt: input.closedAt, closeReason: input.reason },
        status: 201,
      };
    });
  }

  async reportOutcome(
    input: ReportOutcomeInput,
    idempotency: Idempotency,
    render: Render<Outcome>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => {
      const draft = input.outcome;
      const unit = this.workUnitRow(draft.projectId, draft.workUnitId);
      if (!unit) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
      const definitionVersion = input.checkDefinition(
        unit.definitions.find((definition) => definition.id === draft.definitionId),
      );
      if (!outcomeWindowOpen(unit, Date.parse(draft.ingestedAt), input.writeWindowMs)) {
        throw new GatewayError(
          'outcome_write_closed',
          'The Outcome write window (30 days after the Work Unit closed) has passed.',
        );
      }
      const headRow = this.sql(
        'SELECT * FROM outcomes WHERE work_unit_id = ? AND definition_id = ? AND is_head = 1',
      ).get(draft.workUnitId, draft.definitionId) as Row | undefined;
      const head = headRow ? outcomeFromRow(headRow) : undefined;
      const revision = nextRevision(head, draft.supersedesOutcomeId, input.maxRevisions);
      const sequenceRow = this.sql(
        `INSERT INTO project_sequences (project_id, last_sequence) VALUES (?, 1)
         ON CONFLICT (project_id) DO UPDATE SET last_sequence = last_sequence + 1 RETURNING last_sequence`,
      ).get(draft.projectId) as Row;
      const outcome: Outcome = {
        ...draft,
        definitionVersion,
        revision,
        governanceSequence: Number(sequenceRow.last_sequence),
        provisional: unit.status === 'open',
      };
      if (head) this.sql('UPDATE outcomes SET is_head = 0 WHERE id = ?').run(head.id);
      this.sql(
        `INSERT INTO outcomes (id, project_id, work_unit_id, definition_id, definition_version, value, reporter_key_id,
           observed_at, ingested_at, revision, governance_sequence, provisional, evidence_ref, evidence_sha256,
           supersedes_outcome_id, is_head)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
      ).run(
        outcome.id,
        outcome.projectId,
        outcome.workUnitId,
        outcome.definitionId,
        outcome.definitionVersion,
        JSON.stringify(outcome.value),
        outcome.reporterKeyId,
        outcome.observedAt,
        outcome.ingestedAt,
        outcome.revision,
        outcome.governanceSequence,
        outcome.provisional ? 1 : 0,
        outcome.evidenceRef,
        outcome.evidenceSha256,
        outcome.supersedesOutcomeId,
      );
      return { record: outcome, status: 201 };
    });
  }

  async pruneIdempotency(nowIso: string): Promise<number> {
    return this.transaction(
      () => this.sql('DELETE FROM idempotency WHERE expires_at <= ?').run(nowIso).changes,
    );
  }

  // ---- governance reads --------------------------------------------------------------------

  private read<T>(query: () => T): T {
    try {
      return query();
    } catch (error) {
      if (error instanceof Database.SqliteError) throw new StoreUnavailableError(`sqlite: ${error.code}`);
      throw this.closedError(error);
    }
  }

  private workUnitRow(projectId: string, id: string): WorkUnit | undefined {
    const row = this.sql('SELECT * FROM work_units WHERE id = ? AND project_id = ?').get(id, projectId) as
      | Row
      | undefined;
    return row ? workUnitFromRow(row) : undefined;
  }

  async getWorkUnit(projectId: string, id: string): Promise<WorkUnitView | undefined> {
    return this.read(() => {
      const workUnit = this.workUnitRow(projectId, id);
      if (!workUnit) return undefined;
      const runs = (
        this.sql('SELECT * FROM runs WHERE work_unit_id = ? ORDER BY created_at, id').all(id) as Row[]
      ).map(runFromRow);
      const outcomes = (
        this.sql('SELECT * FROM outcomes WHERE work_unit_id = ? ORDER BY governance_sequence').all(
          id,
        ) as Row[]
      ).map(outcomeFromRow);
      return { workUnit, runs, outcomes };
    });
  }

  async getRun(projectId: string, id: string): Promise<Run | undefined> {
    const row = this.read(() =>
      this.sql('SELECT * FROM runs WHERE id = ? AND project_id = ?').get(id, projectId),
    ) as Row | undefined;
    return row ? runFromRow(row) : undefined;
  }

  // ---- ledger ------------------------------------------------------------------------------

  async reserve(input: ReserveInput): Promise<void> {
    const nowIso = isoTime(input.now);
    const reserved = this.groupCommit(() => {
      const sql = (text: string) => this.sql(text);
      const counters = reservationCounters(
        input.projectId,
        input.projectCaps,
        input.keyId,
        this.keyCapsInBatch(input.keyId),
        input.now,
      );
      // Decide every cap before writing anything (a refused item of the group commit writes nothing).
      const tally = new CapTally(counterUsage(sql, counters));
      const capRefusal = tally.refusal(counters, input.reservationMicrosUsd);
      if (input.runId !== null) {
        const admitted = this.sql(
          `UPDATE runs SET reserved = reserved + ?
           WHERE id = ? AND project_id = ? AND status = 'active' AND expires_at > ? AND committed + reserved + ? <= budget`,
        ).run(input.reservationMicrosUsd, input.runId, input.projectId, nowIso, input.reservationMicrosUsd);
        if (admitted.changes !== 1) {
          const row = this.sql('SELECT * FROM runs WHERE id = ? AND project_id = ?').get(
            input.runId,
            input.projectId,
          ) as Row | undefined;
          throw reserveFailure(row ? runFromRow(row) : undefined, nowIso, input.reservationMicrosUsd);
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
      tally.take(counters, input.reservationMicrosUsd);
      addReservations(sql, tally.reservations());
      const capCounters = counters.length === 0 ? null : JSON.stringify(counterKeys(counters));
      this.sql(
        `INSERT INTO attempts (id, project_id, key_id, run_id, state, reservation, lease_expires_at, owner, endpoint, alias,
           connection, profile, upstream_model, created_at, cap_counters)
         VALUES (?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
      });
    });
    // A batch that did not commit wrote no row: forget what its work remembered.
    return reserved.catch((error: unknown) => {
      this.openAttempts.delete(input.attemptId);
      throw this.settledDoubt(error, input.attemptId);
    });
  }

  /**
   * A reservation that failed as unavailable (a full disk, an I/O error at COMMIT): this process is
   * the file's only writer, so one read says whether it committed. Absent: uncommitted, nothing to
   * resolve (StoreUnavailableError.uncommitted). Present, or the read fails too: left in doubt for
   * the ledger, which releases it (Store.releaseInDoubt).
   */
  private settledDoubt(error: unknown, attemptId: string): unknown {
    if (!(error instanceof StoreUnavailableError) || error.uncommitted) return error;
    try {
      if (this.sql('SELECT 1 FROM attempts WHERE id = ?').get(attemptId) !== undefined) return error;
    } catch {
      return error;
    }
    return new StoreUnavailableError(error.message, { cause: error.cause, uncommitted: true });
  }

  async settle(input: SettleInput): Promise<void> {
    return this.groupCommit(() => {
      this.settleInTransaction(input);
    });
  }

  async settleAndRead(input: SettleInput): Promise<SettledAttempt | undefined> {
    return this.transaction(() => {
      const settled = this.settleInTransaction(input);
      return settled && settledAttemptFromRow(settled.attempt, settled.committed);
    });
  }

  /**
   * Group commit for the ledger's hot path: reservations and settlements arriving in the same turn
   * of the event loop run in ONE transaction, in arrival order. Each conditional update still sees
   * the effect of the ones before it, so admission stays exact; an item refused by a rule (budget,
   * closed Run) has written nothing; every promise resolves after the commit.
   *
   * A write arriving alone (the first of its turn, and the last turn had a single write: the process
   * is not under concurrent load) commits at once instead of waiting a turn, so a call at
   * concurrency 1 does not pay the hop; the writes that follow it in the same turn still wait for
   * the turn's flush, and once a turn has seen two or more, every write of the next waits for it:
   * under load each turn commits as one group.
   */
  private groupCommit(work: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ledgerQueue.push({ work, resolve, reject });
      this.ledgerTurnWrites++;
      if (this.ledgerTurnScheduled) return;
      this.ledgerTurnScheduled = true;
      setImmediate(() => {
        this.ledgerTurnScheduled = false;
        this.lastTurnWrites = this.ledgerTurnWrites;
        this.ledgerTurnWrites = 0;
        this.flushLedgerQueue();
      });
      if (this.lastTurnWrites <= 1) this.flushLedgerQueue();
    });
  }

  private flushLedgerQueue(): void {
    if (this.ledgerQueue.length === 0) return;
    // The checkpoint worker is rewinding the WAL (a write that fsyncs): commit a moment later
    // rather than wait for it in SQLite's busy handler, which would stall the event loop.
    if (this.checkpointer && !this.checkpointer.tryHold()) {
      setTimeout(() => this.flushLedgerQueue(), 1);
      return;
    }
    try {
      this.commitLedgerBatch();
    } finally {
      this.checkpointer?.release();
    }
  }

  /** A key's spend caps, read once per ledger batch (see `batchKeyCaps`). */
  private keyCapsInBatch(keyId: string): SpendCaps {
    let caps = this.batchKeyCaps?.get(keyId);
    if (caps === undefined) {
      caps = keyCaps((text) => this.sql(text), keyId);
      this.batchKeyCaps?.set(keyId, caps);
    }
    return caps;
  }

  private commitLedgerBatch(): void {
    const batch = this.ledgerQueue.splice(0);
    const failures = new Map<number, unknown>();
    this.batchKeyCaps = new Map();
    try {
      this.transaction(() => {
        batch.forEach((item, index) => {
          // An item refused with a GatewayError has written nothing (every ledger write decides
          // before it writes), so it needs no savepoint; any other error aborts the whole batch.
          try {
            item.work();
          } catch (error) {
            if (!(error instanceof GatewayError)) throw error;
            failures.set(index, error);
          }
        });
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    } finally {
      this.batchKeyCaps = undefined;
    }
    batch.forEach((item, index) => {
      if (failures.has(index)) item.reject(failures.get(index));
      else item.resolve();
    });
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
      (text) => this.sql(text),
      counterSettlements([
        { counters: recordedCounters(attempt.cap_counters), reservation, commit: amounts.commit },
      ]),
    );
    this.sql(
      `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile, upstream_model, state,
         reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, outcome,
         http_status, duration_ms, overran, created_at, settled_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    );
    return { attempt, committed: amounts.commit };
  }

  async renewLease(attemptId: string, leaseExpiresAt: string): Promise<void> {
    this.transaction(() => {
      this.sql("UPDATE attempts SET lease_expires_at = ? WHERE id = ? AND state = 'reserved'").run(
        leaseExpiresAt,
        attemptId,
      );
    });
  }

  async reapExpiredAttempts(nowIso: string, liveOwner?: string): Promise<ReapedAttempt[]> {
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
  async releaseInDoubt(inputs: ReserveInput[], settledAt: string): Promise<ReapedAttempt[]> {
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

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const conditions: string[] = ['sequence > ?'];
    const values: unknown[] = [query.afterSequence ?? 0];
    if (query.projectId !== undefined) {
      conditions.push('project_id = ?');
      values.push(query.projectId);
    }
    if (query.runId !== undefined) {
      conditions.push('run_id = ?');
      values.push(query.runId);
    }
    values.push(query.limit);
    const rows = this.read(() =>
      this.db
        .prepare(`SELECT * FROM audit WHERE ${conditions.join(' AND ')} ORDER BY sequence LIMIT ?`)
        .all(...values),
    ) as Row[];
    return rows.map(auditFromRow);
  }
}
