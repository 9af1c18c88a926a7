/**
 * PostgreSQL adapter (several replicas share one database). Every operation is one transaction at
 * READ COMMITTED; exactness across replicas comes from row locks and conditional updates, never
 * from reading, deciding in code and writing:
 * - budget admission is decided under the Run's row lock (a conditional UPDATE that PostgreSQL
 *   re-checks against the committed row, or the batch's SELECT ... FOR UPDATE), and the
 *   Runs-per-Work-Unit limit is a conditional UPDATE;
 * - idempotency waits on the unique index of the in-flight duplicate (idempotency.ts);
 * - an Outcome revision locks the head row, and unique indexes catch any race (governance.ts);
 * - ledger details are in ledger.ts; error mapping (503 vs domain errors) in errors.ts.
 * This file owns the pool (pool.ts), the transaction boundary and the plain reads.
 */
import type pg from 'pg';
import { GatewayError, StoreUnavailableError } from '../../errors/gateway-error.js';
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
import { auditFromRow, keyFromRow, outcomeFromRow, type Row, runFromRow } from '../rows.js';
import { PostgresBatches } from './batches.js';
import { PostgresDeferredResponses } from './deferred-responses.js';
import { connectionBroken, toStoreError } from './errors.js';
import { PostgresFilesRepository } from './files.js';
import {
  closeRunIn,
  closeWorkUnitIn,
  insertOutcomeRevision,
  insertRun,
  insertWorkUnit,
  type Write,
  workUnitRow,
} from './governance.js';
import { type BatchOutcome, GroupCommit } from './group-commit.js';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency.js';
import { PostgresJobs } from './jobs.js';
import { PostgresKeys } from './keys.js';
import { reapIn, releaseInDoubtIn, renewLeaseIn, reserveIn, settleIn } from './ledger.js';
import { type Query, reserveAtOnce, settleAtOnce } from './ledger-at-once.js';
import { reserveBatch, settleBatch } from './ledger-batch.js';
import { migrate } from './migrate.js';
import { createPool, DEFAULT_CONNECT_TIMEOUT_MS, type LedgerLane, type PostgresOptions } from './pool.js';
import { PoolGate, type SlotResult, storeBusy } from './pool-gate.js';
import { PostgresRateBuckets } from './rate-buckets.js';
import { PostgresReports } from './reports.js';
import { PostgresRequestLog } from './request-log.js';

export type { PostgresOptions } from './pool.js';

type Client = pg.PoolClient;

const READ_COMMITTED = 'BEGIN ISOLATION LEVEL READ COMMITTED';
/** Multi-statement reads see one snapshot; read-only REPEATABLE READ never fails to serialize. */
const SNAPSHOT_READ = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
/**
 * Reservation batches written at once: one, so this replica's reservations are decided strictly in
 * arrival order (two batches in flight could take the Run's lock in either order).
 */
const RESERVE_BATCHES_IN_FLIGHT = 1;
/** Settlement batches written at once, on the settlement pool (leaves one connection for renewals). */
const SETTLE_BATCHES_IN_FLIGHT = 1;
const MAX_BATCH = 256;

/** Socket errors that mean nobody is there at all: the queue behind them would meet the same. */
const REFUSED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/** How a failed transaction ended, for the pool gate (pool-gate.ts). */
/**
 * Opening a connection timed out. Only this can be load (the server is slow to accept while it
 * answers the others); a refused connection or a pool already closed is the store being gone.
 */
function isConnectTimeout(error: unknown): boolean {
  if (slotResult(error) !== 'failed') return false;
  const cause = (error as StoreUnavailableError).cause;
  const message = cause instanceof Error ? cause.message : '';
  return /timeout exceeded when trying to connect|connection timeout/i.test(message);
}

/** Errors of opening a connection only (a socket that was open can fail with the others mid-statement). */
const CONNECT_ONLY = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/** A pool.query that failed before its statement was sent: no connection could be opened. */
function notSent(error: unknown): boolean {
  if (!(error instanceof StoreUnavailableError)) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' && CONNECT_ONLY.has(code)) || isConnectTimeout(error);
}

/** The same unavailability, known not to have committed anything (StoreUnavailableError.uncommitted). */
function uncommitted(error: unknown): unknown {
  if (!(error instanceof StoreUnavailableError) || error.uncommitted) return error;
  return new StoreUnavailableError(error.message, { cause: error.cause, uncommitted: true });
}

function slotResult(error: unknown): SlotResult {
  if (!(error instanceof StoreUnavailableError)) return 'answered';
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && REFUSED.has(code) ? 'connection_lost' : 'failed';
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly settlePool: pg.Pool;
  private readonly gate: PoolGate;
  private readonly reservations: GroupCommit<ReserveInput>;
  private readonly settlements: GroupCommit<SettleInput>;
  private readonly lockTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly options: PostgresOptions;
  private closed = false;
  readonly files: PostgresFilesRepository;
  readonly jobs: PostgresJobs;
  readonly batches: PostgresBatches;
  readonly deferredResponses: PostgresDeferredResponses;
  readonly rateBuckets: PostgresRateBuckets;
  readonly reports: PostgresReports;
  readonly keys: PostgresKeys;
  readonly requestLog: PostgresRequestLog;

  constructor(options: PostgresOptions) {
    this.options = options;
    const settings = createPool(options);
    this.pool = settings.pool;
    this.settlePool = settings.settlePool;
    this.lockTimeoutMs = settings.lockTimeoutMs;
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.connectTimeoutMs = connectTimeoutMs;
    this.gate = new PoolGate({
      slots: options.poolMax ?? 10,
      maxWaiting: options.queueMax ?? 4096,
      maxWaitMs: options.queueWaitMs ?? 10_000,
      // Backstop only (a lost connection refuses the waiters at once): longer than any statement.
      stallMs: connectTimeoutMs + (options.statementTimeoutMs ?? 5000),
    });
    this.reservations = new GroupCommit(
      async (inputs) => {
        if (await this.atOnce('reserve', () => reserveAtOnce(this.reserveQuery, inputs), false))
          return inputs.map(() => undefined);
        return this.batchOrEach(
          inputs,
          (client) => reserveBatch(client, inputs),
          (input) => this.transaction((client) => reserveIn(client, input)),
        );
      },
      RESERVE_BATCHES_IN_FLIGHT,
      MAX_BATCH,
    );
    this.settlements = new GroupCommit(
      async (inputs) => {
        const settled = await this.atOnce(
          'settle',
          () => settleAtOnce(this.settleQuery, inputs),
          new Set<string>(),
        );
        const rest = inputs.filter((input) => !settled.has(input.attemptId));
        if (rest.length === 0) return inputs.map(() => undefined);
        const outcomes = await this.batchOrEach(
          rest,
          (client) => settleBatch(client, rest),
          async (input) => {
            await this.transaction((client) => settleIn(client, input), READ_COMMITTED, 'settle');
          },
          'settle',
        );
        const outcomeOf = new Map(rest.map((input, index) => [input, outcomes[index]]));
        return inputs.map((input) => outcomeOf.get(input));
      },
      SETTLE_BATCHES_IN_FLIGHT,
      MAX_BATCH,
    );
    this.files = new PostgresFilesRepository(
      (work, begin) => this.transaction(work, begin),
      this.lockTimeoutMs,
    );
    this.jobs = new PostgresJobs((work) => this.transaction(work));
    this.batches = new PostgresBatches((work) => this.transaction(work));
    this.deferredResponses = new PostgresDeferredResponses((work) => this.transaction(work));
    this.rateBuckets = new PostgresRateBuckets((work) => this.transaction(work));
    this.reports = new PostgresReports(
      (text, values) => this.query(text, values),
      (work) => this.transaction(work),
      (work) => this.transaction(work, SNAPSHOT_READ),
    );
    this.requestLog = new PostgresRequestLog((work) => this.transaction(work, SNAPSHOT_READ));
    this.keys = new PostgresKeys(
      (work) => this.transaction(work),
      (idempotency, render, write) => this.idempotent(idempotency, render, write),
    );
  }

  /**
   * A batch's one-statement write (ledger-at-once.ts). A batch it declines, or a statement that
   * fails on the data (a repeated attempt id, a constraint), goes to ledger-batch.ts, where one bad
   * item cannot fail its neighbours (the failure is told to `onLedgerFallback`); a database that is
   * not there, or a full queue for its connections (store_busy), fails the batch here as it would
   * there.
   */
  private async atOnce<T>(lane: LedgerLane, write: () => Promise<T>, declined: T): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof StoreUnavailableError || error instanceof GatewayError) throw error;
      this.options.onLedgerFallback?.(lane, error);
      return declined;
    }
  }

  /** One autocommit statement on the main pool, through its gate. */
  private readonly reserveQuery: Query = (text, values) => this.query(text, values);

  /** One autocommit statement on the settlement pool. */
  private readonly settleQuery: Query = async (text, values) => {
    try {
      return await this.settlePool.query<Row>(text, values);
    } catch (error) {
      throw toStoreError(error);
    }
  };

  /**
   * One batch in one transaction; when the batch as a whole fails for a reason other than the
   * database being unavailable (a bug or a constraint hit by one item), each item is retried in
   * its own transaction so one bad item cannot fail its neighbours.
   */
  private async batchOrEach<I>(
    items: I[],
    batch: (client: Client) => Promise<BatchOutcome[]>,
    single: (item: I) => Promise<void>,
    lane: 'main' | 'settle' = 'main',
  ): Promise<BatchOutcome[]> {
    try {
      return await this.transaction(batch, READ_COMMITTED, lane);
    } catch (error) {
      if (items.length === 1 || error instanceof StoreUnavailableError || error instanceof GatewayError)
        throw error;
      return Promise.all(
        items.map((item) =>
          single(item).then(
            () => undefined,
            (itemError: unknown) => ({ error: itemError }),
          ),
        ),
      );
    }
  }

  /**
   * Runs `work` in one transaction on one connection; failures are mapped by toStoreError.
   * lane 'main' waits for a slot of the main pool (pool-gate.ts: bounded queue, store_busy);
   * lane 'settle' uses the small settlement pool, which new reservations never occupy.
   */
  private async transaction<T>(
    work: (client: Client) => Promise<T>,
    begin = READ_COMMITTED,
    lane: 'main' | 'settle' = 'main',
  ): Promise<T> {
    if (lane === 'settle') return this.transactionOn(this.settlePool, work, begin);
    await this.gate.acquire();
    let result: SlotResult = 'answered';
    try {
      return await this.transactionOn(this.pool, work, begin, (error) =>
        // Opening a connection timed out while the database kept answering the others: that is load.
        isConnectTimeout(error) && this.gate.answeredWithin(this.connectTimeoutMs) ? storeBusy() : error,
      );
    } catch (error) {
      result = slotResult(error);
      throw error;
    } finally {
      this.gate.release(result);
    }
  }

  private async transactionOn<T>(
    pool: pg.Pool,
    work: (client: Client) => Promise<T>,
    begin: string,
    connectFailed: (error: unknown) => unknown = (error) => error,
  ): Promise<T> {
    let client: Client;
    try {
      client = await pool.connect();
    } catch (error) {
      throw connectFailed(uncommitted(toStoreError(error)));
    }
    // A checked-out client has no pool listener: a server restart mid-transaction must not crash us.
    const ignore = () => {};
    client.on('error', ignore);
    let broken = false;
    let committing = false;
    try {
      await client.query(begin);
      const result = await work(client);
      committing = true;
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = connectionBroken(error);
      if (!broken) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
      }
      // Before its COMMIT was sent, a transaction cannot have committed, whatever became of the link.
      const mapped = toStoreError(error);
      throw committing ? mapped : uncommitted(mapped);
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  }

  /** One statement outside an explicit transaction (autocommit is a transaction of its own). */
  private async query<R extends pg.QueryResultRow = Row>(
    text: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    await this.gate.acquire();
    let result: SlotResult = 'answered';
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      const mapped = toStoreError(error);
      result = slotResult(mapped);
      throw notSent(mapped) ? uncommitted(mapped) : mapped;
    } finally {
      this.gate.release(result);
    }
  }

  async migrate(): Promise<void> {
    try {
      await migrate({
        connectionString: this.options.connectionString,
        connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      });
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.settlePool.query('SELECT 1');
    } catch (error) {
      const mapped = toStoreError(error);
      throw mapped instanceof StoreUnavailableError
        ? mapped
        : new StoreUnavailableError(`postgres: ${String(error)}`, { cause: error });
    }
  }

  /** Read-only pool figures for metrics (observability/store-instrumentation.ts). */
  /** Both pools' figures (metrics read them at scrape time): `main` for everything, `settle` for settlements and renewals. */
  poolStats(): Array<{ pool: string; total: number; idle: number; waiting: number; max: number }> {
    const figures = (pool: pg.Pool, name: string) => ({
      pool: name,
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: pool.options.max ?? 10,
    });
    return [figures(this.pool, 'main'), figures(this.settlePool, 'settle')];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.pool.end(), this.settlePool.end()]);
  }

  // ---- keys --------------------------------------------------------------------------------

  async createKey(key: NewKey): Promise<void> {
    await this.query(
      'INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt],
    );
  }

  async upsertConfiguredKey(key: NewKey): Promise<void> {
    await this.query(
      `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, secret_hash = excluded.secret_hash,
         scopes = excluded.scopes, label = excluded.label`,
      [key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt],
    );
  }

  async insertKeyIfAbsent(key: NewKey): Promise<boolean> {
    const result = await this.query(
      `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO NOTHING`,
      [key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt],
    );
    return result.rowCount === 1;
  }

  async findKeyByHash(secretHash: string): Promise<KeyRecord | undefined> {
    const row = (await this.query('SELECT * FROM gateway_keys WHERE secret_hash = $1', [secretHash])).rows[0];
    return row ? keyFromRow(row) : undefined;
  }

  async listKeys(projectId?: string): Promise<KeyRecord[]> {
    const result =
      projectId === undefined
        ? await this.query('SELECT * FROM gateway_keys ORDER BY created_at, id')
        : await this.query('SELECT * FROM gateway_keys WHERE project_id = $1 ORDER BY created_at, id', [
            projectId,
          ]);
    return result.rows.map(keyFromRow);
  }

  async revokeKey(id: string, revokedAt: string): Promise<boolean> {
    const result = await this.query(
      'UPDATE gateway_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2',
      [revokedAt, id],
    );
    return result.rowCount === 1;
  }

  // ---- outcome definitions -----------------------------------------------------------------

  async syncDefinitions(definitions: OutcomeDefinition[]): Promise<void> {
    await this.transaction(async (client) => {
      for (const definition of definitions) {
        await client.query(
          `INSERT INTO outcome_definitions (project_id, id, version, kind, allowed_values, enabled) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (project_id, id, version) DO UPDATE SET enabled = excluded.enabled`,
          [
            definition.projectId,
            definition.id,
            definition.version,
            definition.kind,
            JSON.stringify(definition.allowedValues),
            definition.enabled,
          ],
        );
      }
    });
  }

  async listDefinitions(projectId: string): Promise<OutcomeDefinition[]> {
    const result = await this.query(
      'SELECT * FROM outcome_definitions WHERE project_id = $1 ORDER BY id, version',
      [projectId],
    );
    return result.rows.map((row) => ({
      projectId: String(row.project_id),
      id: String(row.id),
      version: Number(row.version),
      kind: row.kind as OutcomeDefinition['kind'],
      allowedValues: row.allowed_values as Array<string | boolean>,
      enabled: row.enabled === true,
    }));
  }

  // ---- governance writes -------------------------------------------------------------------

  /** One transaction: claim the key (or replay / conflict), do the write, store its response. */
  private idempotent<T>(
    idempotency: Idempotency,
    render: Render<T>,
    write: (client: Client) => Promise<Write<T>>,
  ): Promise<IdempotentResult> {
    // SET LOCAL bounds the wait for an in-flight duplicate (55P03 -> 409) for this transaction only.
    const begin = `${READ_COMMITTED}; SET LOCAL lock_timeout = '${this.lockTimeoutMs}ms'`;
    return this.transaction(async (client) => {
      const claim = await claimIdempotencyKey(client, idempotency);
      if (claim.kind === 'replay') return { status: 200, replayed: true, body: claim.body };
      const { record, status } = await write(client);
      const body = render(record);
      await storeIdempotentResponse(client, idempotency, status, body);
      return { status, replayed: false, body };
    }, begin);
  }

  async createWorkUnit(
    input: CreateWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, (client) => insertWorkUnit(client, input));
  }

  async closeWorkUnit(
    input: CloseWorkUnitInput,
    idempotency: Idempotency,
    render: Render<WorkUnit>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, (client) => closeWorkUnitIn(client, input));
  }

  async createRun(
    input: CreateRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, (client) => insertRun(client, input));
  }

  async closeRun(
    input: CloseRunInput,
    idempotency: Idempotency,
    render: Render<Run>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, (client) => closeRunIn(client, input));
  }

  async reportOutcome(
    input: ReportOutcomeInput,
    idempotency: Idempotency,
    render: Render<Outcome>,
  ): Promise<IdempotentResult> {
    return this.idempotent(idempotency, render, (client) => insertOutcomeRevision(client, input));
  }

  async pruneIdempotency(nowIso: string): Promise<number> {
    return (await this.query('DELETE FROM idempotency WHERE expires_at <= $1', [nowIso])).rowCount ?? 0;
  }

  // ---- governance reads --------------------------------------------------------------------

  async getWorkUnit(projectId: string, id: string): Promise<WorkUnitView | undefined> {
    return this.transaction(async (client) => {
      const workUnit = await workUnitRow(client, projectId, id, '');
      if (!workUnit) return undefined;
      const runs = await client.query<Row>(
        'SELECT * FROM runs WHERE work_unit_id = $1 ORDER BY created_at, id',
        [id],
      );
      const outcomes = await client.query<Row>(
        'SELECT * FROM outcomes WHERE work_unit_id = $1 ORDER BY governance_sequence',
        [id],
      );
      return { workUnit, runs: runs.rows.map(runFromRow), outcomes: outcomes.rows.map(outcomeFromRow) };
    }, SNAPSHOT_READ);
  }

  async getRun(projectId: string, id: string): Promise<Run | undefined> {
    const row = (await this.query('SELECT * FROM runs WHERE id = $1 AND project_id = $2', [id, projectId]))
      .rows[0];
    return row ? runFromRow(row) : undefined;
  }

  // ---- ledger (ledger.ts) ------------------------------------------------------------------

  /** Group commit (ledger-batch.ts): calls queued while a batch is written go in the next one. */
  async reserve(input: ReserveInput): Promise<void> {
    await this.reservations.submit(input);
  }

  /** Group commit on the settlement pool: a settlement never waits behind new reservations. */
  async settle(input: SettleInput): Promise<void> {
    await this.settlements.submit(input);
  }

  /** One transaction on the settlement pool (background settlements are few). */
  async settleAndRead(input: SettleInput): Promise<SettledAttempt | undefined> {
    return this.transaction((client) => settleIn(client, input), READ_COMMITTED, 'settle');
  }

  async renewLease(attemptId: string, leaseExpiresAt: string): Promise<void> {
    await this.transaction(
      (client) => renewLeaseIn(client, attemptId, leaseExpiresAt),
      READ_COMMITTED,
      'settle',
    );
  }

  async reapExpiredAttempts(nowIso: string, liveOwner?: string): Promise<ReapedAttempt[]> {
    return this.transaction((client) => reapIn(client, nowIso, liveOwner));
  }

  /** One transaction on the settlement pool: it is a settlement, and never queues behind new reservations. */
  async releaseInDoubt(inputs: ReserveInput[], settledAt: string): Promise<ReapedAttempt[]> {
    return this.transaction(
      (client) => releaseInDoubtIn(client, inputs, settledAt),
      READ_COMMITTED,
      'settle',
    );
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const conditions = ['sequence > $1'];
    const values: unknown[] = [query.afterSequence ?? 0];
    if (query.projectId !== undefined) {
      values.push(query.projectId);
      conditions.push(`project_id = $${values.length}`);
    }
    if (query.runId !== undefined) {
      values.push(query.runId);
      conditions.push(`run_id = $${values.length}`);
    }
    values.push(query.limit);
    const result = await this.query(
      `SELECT * FROM audit WHERE ${conditions.join(' AND ')} ORDER BY sequence LIMIT $${values.length}`,
      values,
    );
    return result.rows.map(auditFromRow);
  }
}
