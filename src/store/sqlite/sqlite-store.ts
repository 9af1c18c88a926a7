/**
 * SQLite adapter (embedded default). better-sqlite3 is synchronous and this process is the only
 * writer (an advisory lock file refuses a second process), so every operation is one
 * `BEGIN IMMEDIATE` transaction and operations are serial: exactness follows from serial execution.
 * WAL with synchronous=NORMAL survives a process crash; `full` also survives power loss.
 * Split by concern as the PostgreSQL adapter is: opening the file in connection.ts, the ledger in
 * ledger.ts (its group commit in group-commit.ts), governance in governance.ts, idempotency in
 * idempotency.ts, keys in keys.ts. This file owns the connection, the statement cache, the
 * transaction boundary and the plain reads.
 */
import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../errors/gateway-error.js';
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
import { auditFromRow, type Row, runFromRow } from '../rows.js';
import { SqliteBatches } from './batches.js';
import type { WalCheckpointer } from './checkpointer.js';
import { openConnection, type SqliteOptions } from './connection.js';
import { SqliteDeferredResponses } from './deferred-responses.js';
import { SqliteEvents } from './events.js';
import { SqliteFilesRepository } from './files.js';
import {
  closeRunIn,
  closeWorkUnitIn,
  insertOutcomeRevision,
  insertRun,
  insertWorkUnit,
  listDefinitionsIn,
  runRow,
  syncDefinitionsIn,
  type Write,
  workUnitView,
} from './governance.js';
import { claimIdempotencyKey, pruneIdempotencyIn, storeIdempotentResponse } from './idempotency.js';
import { SqliteJobs } from './jobs.js';
import {
  createKeyIn,
  findKeyByHashIn,
  insertKeyIfAbsentIn,
  listKeysIn,
  revokeKeyIn,
  SqliteKeys,
  upsertConfiguredKeyIn,
} from './keys.js';
import { SqliteLedger } from './ledger.js';
import { migrate } from './migrate.js';
import type { ProcessLock } from './process-lock.js';
import { SqliteRateBuckets } from './rate-buckets.js';
import { SqliteReports } from './reports.js';
import { SqliteRequestLog } from './request-log.js';
import type { Sql, SqliteRead, SqliteTransaction } from './transaction.js';
import { SqliteWebhooks } from './webhooks.js';

export type { SqliteOptions } from './connection.js';

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly lock: ProcessLock | undefined;
  private checkpointer: WalCheckpointer | undefined;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly ledger: SqliteLedger;
  /** One transaction wrapper for every write (creating one per call costs more than a small write). */
  private readonly inTransaction: Database.Transaction<(work: () => unknown) => unknown>;
  readonly files: SqliteFilesRepository;
  readonly jobs: SqliteJobs;
  readonly batches: SqliteBatches;
  readonly deferredResponses: SqliteDeferredResponses;
  readonly rateBuckets: SqliteRateBuckets;
  readonly reports: SqliteReports;
  readonly keys: SqliteKeys;
  readonly requestLog: SqliteRequestLog;
  readonly events: SqliteEvents;
  readonly webhooks: SqliteWebhooks;

  constructor(options: SqliteOptions) {
    const opened = openConnection(options, (reason) => this.checkpointerFailed(reason));
    this.db = opened.db;
    this.lock = opened.lock;
    this.checkpointer = opened.checkpointer;
    this.inTransaction = this.db.transaction((work: () => unknown) => work());
    this.ledger = new SqliteLedger(this.sql, this.transaction, () => this.checkpointer);
    this.files = new SqliteFilesRepository(this.db, this.transaction);
    this.jobs = new SqliteJobs(this.db, this.transaction);
    this.batches = new SqliteBatches(this.db, this.transaction);
    this.deferredResponses = new SqliteDeferredResponses(this.db, this.transaction);
    this.rateBuckets = new SqliteRateBuckets(this.db, this.transaction);
    this.reports = new SqliteReports(this.db, this.read, this.transaction, this.sql, () => this.checkpointer);
    this.keys = new SqliteKeys(this.db, this.transaction, this.idempotent);
    this.requestLog = new SqliteRequestLog(this.db, this.read);
    this.events = new SqliteEvents(this.db, this.sql, this.read, this.transaction);
    this.webhooks = new SqliteWebhooks(this.sql, this.db, this.transaction, this.idempotent);
  }

  /** The prepared statement for `text`, prepared once on this connection. */
  private readonly sql: Sql = (text) => {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  };

  /** Runs `work` in a BEGIN IMMEDIATE transaction; driver failures become StoreUnavailableError. */
  private readonly transaction: SqliteTransaction = <T>(work: () => T): T => {
    try {
      return this.inTransaction.immediate(work) as T;
    } catch (error) {
      if (error instanceof Database.SqliteError && !error.code.startsWith('SQLITE_CONSTRAINT')) {
        throw new StoreUnavailableError(`sqlite: ${error.code}`);
      }
      throw this.closedError(error);
    }
  };

  /** A read outside a transaction, its failures mapped as the transaction's are. */
  private readonly read: SqliteRead = <T>(query: () => T): T => {
    try {
      return query();
    } catch (error) {
      if (error instanceof Database.SqliteError) throw new StoreUnavailableError(`sqlite: ${error.code}`);
      throw this.closedError(error);
    }
  };

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

  /** Applies the pending migrations, then folds the report rollups in the background (report-fold.ts). */
  async migrate(): Promise<void> {
    migrate(this.db, this.transaction);
    this.reports.startFolding();
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
    this.reports.stopFolding();
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    if (this.db.open) {
      this.checkpoint();
      this.db.close();
    }
    this.lock?.release();
  }

  // ---- keys (keys.ts) ----------------------------------------------------------------------

  async createKey(key: NewKey): Promise<void> {
    this.transaction(() => createKeyIn(this.sql, key));
  }

  async upsertConfiguredKey(key: NewKey): Promise<void> {
    this.transaction(() => upsertConfiguredKeyIn(this.sql, key));
  }

  async insertKeyIfAbsent(key: NewKey): Promise<boolean> {
    return this.transaction(() => insertKeyIfAbsentIn(this.sql, key));
  }

  async findKeyByHash(secretHash: string): Promise<KeyRecord | undefined> {
    return this.read(() => findKeyByHashIn(this.sql, secretHash));
  }

  async listKeys(projectId?: string): Promise<KeyRecord[]> {
    return this.read(() => listKeysIn(this.sql, projectId));
  }

  async revokeKey(id: string, revokedAt: string): Promise<boolean> {
    return this.transaction(() => revokeKeyIn(this.sql, id, revokedAt));
  }

  // ---- outcome definitions (governance.ts) -------------------------------------------------

  async syncDefinitions(definitions: OutcomeDefinition[]): Promise<void> {
    this.transaction(() => syncDefinitionsIn(this.sql, definitions));
  }

  async listDefinitions(projectId: string): Promise<OutcomeDefinition[]> {
    return this.read(() => listDefinitionsIn(this.sql, projectId));
  }

  // ---- governance writes (governance.ts, idempotency.ts) -----------------------------------

  /** One transaction: replay or conflict on a known key, else do the write and store its response. */
  private readonly idempotent = <T>(
    idempotency: Idempotency,
    render: Render<T>,
    write: () => Write<T>,
  ): IdempotentResult =>
    this.transaction(() => {
      const claim = claimIdempotencyKey(this.sql, idempotency);
      if (claim.kind === 'replay') return { status: 200, replayed: true, body: claim.body };
      const { record, status } = write();
      const body = render(record);
      storeIdempotentResponse(this.sql, idempotency, status, body);
      return { status, replayed: false, body };
    });

  async createWorkUnit(
    input: CreateWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => insertWorkUnit(this.sql, input));
  }

  async closeWorkUnit(
    input: CloseWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => closeWorkUnitIn(this.sql, input));
  }

  async createRun(
    input: CreateRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => insertRun(this.sql, input));
  }

  async closeRun(
    input: CloseRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => closeRunIn(this.sql, input));
  }

  async reportOutcome(
    input: ReportOutcomeInput,
    idempotency: Idempotency,
    render: Render<Outcome>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, () => insertOutcomeRevision(this.sql, input));
  }

  async pruneIdempotency(nowIso: string): Promise<number> {
    return this.transaction(() => pruneIdempotencyIn(this.sql, nowIso));
  }

  // ---- governance reads (governance.ts) ----------------------------------------------------

  async getWorkUnit(projectId: string, id: string): Promise<WorkUnitView | undefined> {
    return this.read(() => workUnitView(this.sql, projectId, id));
  }

  async getRun(projectId: string, id: string): Promise<Run | undefined> {
    const row = this.read(() => runRow(this.sql, projectId, id));
    return row ? runFromRow(row) : undefined;
  }

  // ---- ledger (ledger.ts) ------------------------------------------------------------------

  /** Group commit (group-commit.ts): the writes of one turn of the event loop commit together. */
  async reserve(input: ReserveInput): Promise<void> {
    return this.ledger.reserve(input);
  }

  async settle(input: SettleInput): Promise<void> {
    return this.ledger.settle(input);
  }

  async settleAndRead(input: SettleInput): Promise<SettledAttempt | undefined> {
    return this.ledger.settleAndRead(input);
  }

  async renewLease(attemptId: string, leaseExpiresAt: string): Promise<void> {
    this.ledger.renewLease(attemptId, leaseExpiresAt);
  }

  async reapExpiredAttempts(nowIso: string, liveOwner?: string): Promise<ReapedAttempt[]> {
    return this.ledger.reapExpiredAttempts(nowIso, liveOwner);
  }

  async releaseInDoubt(inputs: ReserveInput[], settledAt: string): Promise<ReapedAttempt[]> {
    return this.ledger.releaseInDoubt(inputs, settledAt);
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const conditions: string[] = ['sequence > ?'];
    const values: unknown[] = [query.afterSequence ?? 0];
    if (query.projectId !== undefined) {
      // In sequence order, the table's key, filtered (migration 18): through the request log's
      // (project_id, created_at) index it would sort every entry of the Project first.
      conditions.push('+project_id = ?');
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
