/**
 * SQLite reports repository (Store.reports): plain reads on the store's connection (serial with
 * the writes, so every read is one consistent state). The spend reads first fold what has settled
 * into the hourly rollups (report-fold.ts), then read each rollup plus the entries above its
 * watermark. Sums of the spend report are read as numbers and checked exact (report-rows.ts
 * `figure`); those of Work Units with safeIntegers (bigint).
 */
import type Database from 'better-sqlite3';
import type { AuditEntry, Outcome, Run, WorkUnit } from '../port.js';
import {
  nonEmpty,
  refusalFromRow,
  spendFromRow,
  withUnattributed,
  workUnitSpendFromRow,
} from '../report-rows.js';
import {
  attributeAuditSql,
  outcomeListSql,
  refusalSql,
  runAttemptsSql,
  runListSql,
  type Statement,
  spendSql,
  sqliteAttributeSpendSql,
  sqliteBucketTime,
  workUnitListSql,
  workUnitSpendSql,
  workUnitTagSpendSql,
} from '../report-sql.js';
import type {
  OutcomeListQuery,
  RefusalRecord,
  RefusalRow,
  ReportsRepository,
  RunListQuery,
  SpendQuery,
  SpendRow,
  WorkUnitListQuery,
  WorkUnitSpend,
  WorkUnitSpendQuery,
} from '../reports-port.js';
import { auditFromRow, outcomeFromRow, type Row, runFromRow, workUnitFromRow } from '../rows.js';
import type { WalCheckpointer } from './checkpointer.js';
import { SQLITE_FOLD_SOURCES, SqliteReportFolder } from './report-fold.js';
import type { Sql, SqliteRead, SqliteTransaction } from './transaction.js';

function withBucketTime(row: Row): Row {
  if (row.bucket !== undefined) row.bucket = sqliteBucketTime(String(row.bucket));
  return row;
}

export class SqliteReports implements ReportsRepository {
  private readonly folder: SqliteReportFolder;

  constructor(
    private readonly db: Database.Database,
    private readonly read: SqliteRead,
    private readonly transaction: SqliteTransaction,
    /** The store's prepared-statement cache. */
    private readonly sql: Sql,
    /** The checkpoint worker, while it runs (report-fold.ts keeps off its WAL rewinds). */
    checkpointer: () => WalCheckpointer | undefined,
  ) {
    this.folder = new SqliteReportFolder(sql, transaction, checkpointer);
  }

  private all(statement: Statement, exact = false): Row[] {
    return this.read(
      () =>
        this.db
          .prepare(statement.sql)
          .safeIntegers(exact)
          .all(...statement.values) as Row[],
    );
  }

  async listWorkUnits(query: WorkUnitListQuery): Promise<WorkUnit[]> {
    return this.all(workUnitListSql(query, 'sqlite')).map(workUnitFromRow);
  }

  async listRuns(query: RunListQuery): Promise<Run[]> {
    return this.all(runListSql(query, 'sqlite')).map(runFromRow);
  }

  async listOutcomes(query: OutcomeListQuery): Promise<Outcome[]> {
    return this.all(outcomeListSql('sqlite', query)).map(outcomeFromRow);
  }

  async listAttempts(runId: string, afterSequence: number, limit: number): Promise<AuditEntry[]> {
    return this.all(runAttemptsSql(runId, afterSequence, limit)).map(auditFromRow);
  }

  async spend(query: SpendQuery): Promise<SpendRow[]> {
    const spendRows = (rows: Row[]) => rows.map((row) => spendFromRow(withBucketTime(row))).filter(nonEmpty);
    const attribute = query.attribute ?? null;
    // With dimensions the attribute rollup does not keep: the audit rows, the group null included.
    if (attribute !== null && query.dimensions.length > 0)
      return spendRows(this.all(attributeAuditSql('sqlite', query, attribute)));
    // A fold only shortens the entries read past the watermarks; the figures are exact either way.
    await this.folder.fold('audit');
    if (attribute === null) return spendRows(this.all(spendSql(query)));
    await this.folder.fold('audit_attributes');
    // Both rollups in one read (no write in between): the group without the attribute is the
    // difference of the two (report-rows.ts withUnattributed).
    const run = (statement: Statement) => this.db.prepare(statement.sql).all(...statement.values) as Row[];
    const [all, attributed] = this.read(() => [
      run(spendSql(query)),
      run(sqliteAttributeSpendSql(query, attribute)),
    ]);
    return withUnattributed(spendRows(all), spendRows(attributed));
  }

  async refusals(query: SpendQuery): Promise<RefusalRow[]> {
    return this.all(refusalSql('sqlite', query))
      .map(withBucketTime)
      .map(refusalFromRow)
      .filter((row) => row.refusals > 0);
  }

  /** Folds every settled audit entry into the hourly rollups. */
  async fold(): Promise<void> {
    for (const source of SQLITE_FOLD_SOURCES) await this.folder.fold(source);
  }

  /** Folds in the background every second (report-fold.ts), until `stopFolding`. */
  startFolding(intervalMs?: number): void {
    this.folder.start(intervalMs);
  }

  stopFolding(): void {
    this.folder.stop();
  }

  async recordRefusals(refusals: readonly RefusalRecord[]): Promise<void> {
    if (refusals.length === 0) return;
    const insert = this.sql(
      `INSERT INTO refusals (project_id, key_id, run_id, alias, connection, upstream_model, reason, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.transaction(() => {
      for (const refusal of refusals)
        insert.run(
          refusal.projectId,
          refusal.keyId,
          refusal.runId,
          refusal.alias,
          refusal.connection,
          refusal.upstreamModel,
          refusal.reason,
          refusal.createdAt,
        );
    });
  }

  async workUnitSpend(query: WorkUnitSpendQuery): Promise<WorkUnitSpend[]> {
    const groupBy = query.groupBy ?? null;
    const statement =
      groupBy === null
        ? workUnitSpendSql('sqlite', query)
        : groupBy.kind === 'metadata'
          ? workUnitSpendSql('sqlite', query, groupBy.name)
          : workUnitTagSpendSql('sqlite', query, groupBy.name);
    return this.all(statement, true).map(workUnitSpendFromRow);
  }
}
