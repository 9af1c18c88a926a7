/**
 * SQLite request log repository (Store.requestLog): plain reads on the store's connection, serial
 * with the writes, so the two sources of a page (audit trail, open attempts) see one state.
 */
import type Database from 'better-sqlite3';
import type { AttemptLogQuery, LoggedAttempt, RequestLogRepository } from '../request-log-port.js';
import { mergeLogPages, oneAttemptSql, openLogSql, settledLogSql } from '../request-log-sql.js';
import { loggedAttemptFromRow, type Row } from '../rows.js';
import type { SqliteRead } from './transaction.js';

export class SqliteRequestLog implements RequestLogRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly read: SqliteRead,
  ) {}

  private all(statement: { sql: string; values: unknown[] }): LoggedAttempt[] {
    return this.read(() => this.db.prepare(statement.sql).all(...statement.values) as Row[]).map(
      loggedAttemptFromRow,
    );
  }

  async list(query: AttemptLogQuery): Promise<LoggedAttempt[]> {
    const settled = this.all(settledLogSql('sqlite', query));
    const open = openLogSql('sqlite', query);
    return mergeLogPages(settled, open ? this.all(open) : [], query.limit);
  }

  async get(projectId: string, attemptId: string): Promise<LoggedAttempt | undefined> {
    const statements = oneAttemptSql('sqlite', projectId, attemptId);
    return this.all(statements.settled)[0] ?? this.all(statements.open)[0];
  }
}
