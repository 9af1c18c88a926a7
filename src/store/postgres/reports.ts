/**
 * PostgreSQL reports repository (Store.reports). Each read is one statement (one snapshot); the
 * spend and refusal reads first fold what they can into the hourly rollups (report-fold.ts); sums
 * come back as text (numeric/bigint) and are parsed to bigint, never through a float.
 */
import pg from 'pg';
import type { AuditEntry, Outcome, Run, WorkUnit } from '../port.js';
import {
  addTotals,
  inKeyOrder,
  nonEmpty,
  refusalFromRow,
  spendFromRow,
  withUnattributed,
  workUnitSpendFromRow,
} from '../report-rows.js';
import {
  attributeAuditSql,
  numbered,
  outcomeListSql,
  postgresAttributeSpendSql,
  postgresSpendSql,
  refusalSql,
  runAttemptsSql,
  runListSql,
  type Statement,
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
import { type FoldOptions, ReportFolder } from './report-fold.js';
import type { PgTransaction } from './transaction.js';

/** A bucket that arrives as a timestamptz (a Date here): the reports carry RFC 3339 text. */
function withBucketTime(row: Row): Row {
  if (row.bucket instanceof Date) row.bucket = row.bucket.toISOString();
  return row;
}

/** Rollup rows plus the unfolded tail's rows, added up per key, in key order. */
function mergeSpend(rollup: SpendRow[], tail: SpendRow[]): SpendRow[] {
  const rows = rollup.filter(nonEmpty);
  for (const row of tail) if (nonEmpty(row)) rows.push(row);
  return inKeyOrder(rows, (into, more) => addTotals(into.totals, more.totals));
}

function statementOf(statement: Statement): { text: string; values: unknown[] } {
  return { text: numbered(statement.sql), values: statement.values };
}

/**
 * The spend read's sums (BIGINT, NUMERIC) parsed straight to JS numbers; report-rows.ts `figure`
 * then refuses any that is not a safe integer (text at or past 2^53 parses to one that is not).
 * Other columns (text buckets and dimensions) keep node-postgres's parsers.
 */
const INT8 = 20;
const NUMERIC = 1700;
const FIGURES_AS_NUMBERS = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 || oid === NUMERIC
      ? Number
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export type PostgresQuery = (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;

export class PostgresReports implements ReportsRepository {
  private readonly folder: ReportFolder;

  /**
   * `transaction` runs READ COMMITTED (the folds), `snapshot` REPEATABLE READ READ ONLY (a report's
   * statements see one state).
   */
  constructor(
    private readonly query: PostgresQuery,
    transaction: PgTransaction,
    private readonly snapshot: PgTransaction,
    foldOptions?: FoldOptions,
  ) {
    this.folder = new ReportFolder(query, transaction, foldOptions);
  }

  /** Folds the audit trail and the refusals into the hourly rollups as far as is safe now. */
  async fold(): Promise<void> {
    await this.folder.fold('audit');
    await this.folder.fold('audit_attributes');
    await this.folder.fold('refusals');
  }

  private async all(statement: Statement): Promise<Row[]> {
    return (await this.query(numbered(statement.sql), statement.values)).rows;
  }

  async listWorkUnits(query: WorkUnitListQuery): Promise<WorkUnit[]> {
    return (await this.all(workUnitListSql(query, 'postgres'))).map(workUnitFromRow);
  }

  async listRuns(query: RunListQuery): Promise<Run[]> {
    return (await this.all(runListSql(query, 'postgres'))).map(runFromRow);
  }

  async listOutcomes(query: OutcomeListQuery): Promise<Outcome[]> {
    return (await this.all(outcomeListSql('postgres', query))).map(outcomeFromRow);
  }

  async listAttempts(runId: string, afterSequence: number, limit: number): Promise<AuditEntry[]> {
    return (await this.all(runAttemptsSql(runId, afterSequence, limit))).map(auditFromRow);
  }

  async spend(query: SpendQuery): Promise<SpendRow[]> {
    const attribute = query.attribute ?? null;
    if (attribute !== null && query.dimensions.length > 0) {
      // Dimensions the attribute rollup does not keep: the audit rows, the group null included.
      const rows = await this.all(attributeAuditSql('postgres', query, attribute));
      return rows.map(withBucketTime).map(spendFromRow).filter(nonEmpty);
    }
    // A fold only shortens the raw tail the report reads; the figures are exact either way.
    await this.folder.fold('audit');
    if (attribute !== null) await this.folder.fold('audit_attributes');
    const totals = postgresSpendSql(query);
    const attributed = attribute === null ? null : postgresAttributeSpendSql(query, attribute);
    // Every statement in one snapshot: each rollup plus the raw rows above its own watermark.
    const read = async (client: pg.PoolClient, statement: Statement) =>
      (await client.query<Row>({ ...statementOf(statement), types: FIGURES_AS_NUMBERS })).rows
        .map(withBucketTime)
        .map(spendFromRow);
    const [rollup, tail, attributeRollup, attributeTail] = await this.snapshot(async (client) => [
      await read(client, totals.rollup),
      await read(client, totals.tail),
      attributed === null ? [] : await read(client, attributed.rollup),
      attributed === null ? [] : await read(client, attributed.tail),
    ]);
    const all = mergeSpend(rollup, tail);
    if (attributed === null) return all;
    return withUnattributed(all, mergeSpend(attributeRollup, attributeTail));
  }

  async refusals(query: SpendQuery): Promise<RefusalRow[]> {
    await this.folder.fold('refusals');
    return (await this.all(refusalSql('postgres', query)))
      .map(withBucketTime)
      .map(refusalFromRow)
      .filter((row) => row.refusals > 0);
  }

  async recordRefusals(refusals: readonly RefusalRecord[]): Promise<void> {
    if (refusals.length === 0) return;
    const column = <T>(value: (refusal: RefusalRecord) => T) => refusals.map(value);
    await this.query(
      `INSERT INTO refusals (project_id, key_id, run_id, alias, connection, upstream_model, reason, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::timestamptz[])`,
      [
        column((refusal) => refusal.projectId),
        column((refusal) => refusal.keyId),
        column((refusal) => refusal.runId),
        column((refusal) => refusal.alias),
        column((refusal) => refusal.connection),
        column((refusal) => refusal.upstreamModel),
        column((refusal) => refusal.reason),
        column((refusal) => refusal.createdAt),
      ],
    );
  }

  async workUnitSpend(query: WorkUnitSpendQuery): Promise<WorkUnitSpend[]> {
    const groupBy = query.groupBy ?? null;
    const statement =
      groupBy === null
        ? workUnitSpendSql('postgres', query)
        : groupBy.kind === 'metadata'
          ? workUnitSpendSql('postgres', query, groupBy.name)
          : workUnitTagSpendSql('postgres', query, groupBy.name);
    return (await this.all(statement)).map(workUnitSpendFromRow);
  }
}
