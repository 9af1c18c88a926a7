/**
 * PostgreSQL request log repository (Store.requestLog). A page reads its two sources (audit trail,
 * open attempts) in one REPEATABLE READ snapshot, so an attempt settling meanwhile is read once;
 * the merge keeps its audit entry in any case.
 */
import type pg from 'pg';
import { numbered, type Statement } from '../report-sql.js';
import type { AttemptLogQuery, LoggedAttempt, RequestLogRepository } from '../request-log-port.js';
import { mergeLogPages, oneAttemptSql, openLogSql, settledLogSql } from '../request-log-sql.js';
import { loggedAttemptFromRow, type Row } from '../rows.js';
import type { PgTransaction } from './transaction.js';

async function all(client: pg.PoolClient, statement: Statement): Promise<LoggedAttempt[]> {
  return (await client.query<Row>(numbered(statement.sql), statement.values)).rows.map(loggedAttemptFromRow);
}

export class PostgresRequestLog implements RequestLogRepository {
  /** `snapshot`: a REPEATABLE READ READ ONLY transaction. */
  constructor(private readonly snapshot: PgTransaction) {}

  async list(query: AttemptLogQuery): Promise<LoggedAttempt[]> {
    const open = openLogSql('postgres', query);
    return this.snapshot(async (client) => {
      const settled = await all(client, settledLogSql('postgres', query));
      return mergeLogPages(settled, open ? await all(client, open) : [], query.limit);
    });
  }

  async get(projectId: string, attemptId: string): Promise<LoggedAttempt | undefined> {
    const statements = oneAttemptSql('postgres', projectId, attemptId);
    return this.snapshot(
      async (client) => (await all(client, statements.settled))[0] ?? (await all(client, statements.open))[0],
    );
  }
}
