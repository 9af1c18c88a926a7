/**
 * SQL of the request log sub-port (request-log-port.ts), written once for both adapters with `?`
 * placeholders (the PostgreSQL adapter numbers them). Two sources, each read in the log's order
 * (created_at DESC, attempt_id DESC) and merged by the caller (mergeLogPages):
 * - settled attempts: the audit trail, on the indexes of migration 11 (Project, key, Run, Work Unit);
 * - open attempts: the attempts still reserved (few: the calls in flight), their Work Unit and
 *   metadata read from their Run as the settlement will store them.
 */
import { attributeConditions, Conditions, type Dialect, type Statement } from './report-sql.js';
import type { AttemptLogQuery, LoggedAttempt } from './request-log-port.js';

/** The merged metadata of an open attempt's Run (`r`) and Work Unit (`w`), as settlement stores it. */
function openMetadata(dialect: Dialect): string {
  return dialect === 'postgres'
    ? "CASE WHEN r.id IS NULL THEN NULL ELSE coalesce(w.metadata, '{}'::jsonb) || coalesce(r.metadata, '{}'::jsonb) END"
    : "CASE WHEN r.id IS NULL THEN NULL ELSE json_patch(coalesce(w.metadata, '{}'), coalesce(r.metadata, '{}')) END";
}

/** The filters both sources share; `t` is the source's alias. */
function sharedConditions(c: Conditions, dialect: Dialect, query: AttemptLogQuery, workUnit: string): void {
  if (query.from !== undefined) c.add('t.created_at >= ?', query.from);
  if (query.to !== undefined) c.add('t.created_at < ?', query.to);
  if (query.keyId !== undefined) c.add('t.key_id = ?', query.keyId);
  if (query.alias !== undefined) c.add('t.alias = ?', query.alias);
  if (query.connection !== undefined) c.add('t.connection = ?', query.connection);
  if (query.upstreamModel !== undefined) c.add('t.upstream_model = ?', query.upstreamModel);
  if (query.runId !== undefined) c.add('t.run_id = ?', query.runId);
  if (query.workUnitId !== undefined) c.add(`${workUnit} = ?`, query.workUnitId);
  attributeConditions(c, dialect, 't.tags', query.tags);
  if (query.after !== undefined)
    c.add('(t.created_at, t.attempt_id) < (?, ?)', query.after.createdAt, query.after.id);
}

/** Settled attempts: the audit trail. */
export function settledLogSql(dialect: Dialect, query: AttemptLogQuery): Statement {
  const c = new Conditions();
  c.add('t.project_id = ?', query.projectId);
  sharedConditions(c, dialect, query, 't.work_unit_id');
  attributeConditions(c, dialect, 't.metadata', query.metadata);
  if (query.outcome !== undefined) c.add('t.outcome = ?', query.outcome);
  if (query.httpStatus !== undefined) c.add('t.http_status = ?', query.httpStatus);
  return {
    sql: `SELECT t.* FROM audit t WHERE ${c.sql} ORDER BY t.created_at DESC, t.attempt_id DESC LIMIT ?`,
    values: [...c.values, query.limit],
  };
}

/** The open attempts' columns under the audit trail's names (`attempt_id`, `work_unit_id`, `metadata`). */
function openColumns(dialect: Dialect): string {
  return `a.id AS attempt_id, a.call_id, a.project_id, a.key_id, a.run_id, r.work_unit_id, a.endpoint, a.alias,
    a.connection, a.profile, a.upstream_model, a.state, a.reservation, a.tags, ${openMetadata(dialect)} AS metadata,
    a.route, a.trace_id, a.created_at`;
}

const OPEN_FROM =
  'attempts a LEFT JOIN runs r ON r.id = a.run_id LEFT JOIN work_units w ON w.id = r.work_unit_id';

/** Open attempts (reserved, not settled); none when the query filters on a settlement's fields. */
export function openLogSql(dialect: Dialect, query: AttemptLogQuery): Statement | undefined {
  if (query.outcome !== undefined || query.httpStatus !== undefined) return undefined;
  const c = new Conditions();
  c.add("t.state = 'reserved'");
  c.add('t.project_id = ?', query.projectId);
  sharedConditions(c, dialect, query, 't.work_unit_id');
  attributeConditions(c, dialect, 't.metadata', query.metadata);
  return {
    sql: `SELECT t.* FROM (SELECT ${openColumns(dialect)} FROM ${OPEN_FROM}
      WHERE a.state = 'reserved' AND a.project_id = ?) t
      WHERE ${c.sql} ORDER BY t.created_at DESC, t.attempt_id DESC LIMIT ?`,
    values: [query.projectId, ...c.values, query.limit],
  };
}

/** One attempt: its audit entry, else its open row. */
export function oneAttemptSql(
  dialect: Dialect,
  projectId: string,
  attemptId: string,
): {
  settled: Statement;
  open: Statement;
} {
  return {
    settled: {
      sql: 'SELECT * FROM audit WHERE attempt_id = ? AND project_id = ?',
      values: [attemptId, projectId],
    },
    open: {
      sql: `SELECT ${openColumns(dialect)} FROM ${OPEN_FROM} WHERE a.id = ? AND a.project_id = ? AND a.state = 'reserved'`,
      values: [attemptId, projectId],
    },
  };
}

/** Later in the log's order first: created_at DESC, then attempt id DESC. */
function newerFirst(a: LoggedAttempt, b: LoggedAttempt): number {
  const byTime = Date.parse(b.createdAt) - Date.parse(a.createdAt);
  if (byTime !== 0) return byTime;
  return a.attemptId < b.attemptId ? 1 : a.attemptId > b.attemptId ? -1 : 0;
}

/**
 * The two sources merged into one page of `limit`: an attempt that settled between the two reads
 * is in both; its audit entry wins.
 */
export function mergeLogPages(
  settled: LoggedAttempt[],
  open: LoggedAttempt[],
  limit: number,
): LoggedAttempt[] {
  const seen = new Set(settled.map((attempt) => attempt.attemptId));
  return [...settled, ...open.filter((attempt) => !seen.has(attempt.attemptId))]
    .sort(newerFirst)
    .slice(0, limit);
}
