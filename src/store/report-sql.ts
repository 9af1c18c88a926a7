/**
 * SQL of the reports sub-port, written once for both adapters. Queries use `?` placeholders; the
 * PostgreSQL adapter numbers them ($1, $2, ...). The few dialect differences (booleans, the time
 * bucket, the spend source) are parameters of the builders.
 */
import type { Attributes } from './records.js';
import {
  type AttributeKind,
  type AttributeRef,
  type OutcomeListQuery,
  type RunListQuery,
  SPEND_DIMENSIONS,
  type SpendDimension,
  type SpendQuery,
  type WorkUnitListQuery,
  type WorkUnitSpendQuery,
} from './reports-port.js';

/**
 * THE definition of an unknown attempt on an audit row (and on a row of the SQLite hourly rollup,
 * which is keyed by the same `state` column): committed at its whole reservation because
 * its cost could not be known. Today the row's state is 'unknown'. After the attempt-runner
 * migration (settlement outcome stored on the row) it becomes
 * `outcome IN ('unknown', 'cancelled_running', 'lease_expired')`. Nothing else encodes it.
 */
export const UNKNOWN_ATTEMPT_SQL = "state = 'unknown'";

export type Dialect = 'sqlite' | 'postgres';

/** Indexes of migration 4 on both adapters: refusals by time, list keysets. */
export const REPORT_INDEXES = `CREATE INDEX refusals_by_project ON refusals(project_id, created_at);
CREATE INDEX work_units_by_project ON work_units(project_id, created_at, id);
CREATE INDEX runs_by_project ON runs(project_id, created_at, id);
CREATE INDEX outcomes_by_project ON outcomes(project_id, governance_sequence);`;

export interface Statement {
  sql: string;
  values: unknown[];
}

/** `?` -> `$n` for node-postgres (the report SQL has no `?` inside literals). */
export function numbered(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

/** WHERE conditions and their values, in placeholder order. */
export class Conditions {
  readonly where: string[] = [];
  readonly values: unknown[] = [];
  add(condition: string, ...values: unknown[]): void {
    this.where.push(condition);
    this.values.push(...values);
  }
  get sql(): string {
    return this.where.join(' AND ');
  }
}

function flag(dialect: Dialect, value: boolean): unknown {
  return dialect === 'sqlite' ? (value ? 1 : 0) : value;
}

/**
 * One condition per attribute filter on a JSON column (`metadata`, `tags`): PostgreSQL tests
 * containment (`@>`, served by the column's GIN index), SQLite extracts the key (quoted, so a key
 * with dots is one key).
 */
export function attributeConditions(
  c: Conditions,
  dialect: Dialect,
  column: string,
  filters: Attributes | undefined,
): void {
  if (filters === undefined) return;
  for (const [key, value] of Object.entries(filters)) {
    if (dialect === 'postgres') c.add(`${column} @> ?::jsonb`, JSON.stringify({ [key]: value }));
    else c.add(`json_extract(${column}, ?) = ?`, `$."${key}"`, value);
  }
}

export function workUnitListSql(query: WorkUnitListQuery, dialect: Dialect): Statement {
  const c = new Conditions();
  c.add('project_id = ?', query.projectId);
  attributeConditions(c, dialect, 'metadata', query.metadata);
  if (query.status !== undefined) c.add('status = ?', query.status);
  if (query.createdFrom !== undefined) c.add('created_at >= ?', query.createdFrom);
  if (query.createdTo !== undefined) c.add('created_at < ?', query.createdTo);
  if (query.after !== undefined) {
    c.add('(created_at, id) < (?, ?)', query.after.createdAt, query.after.id);
  }
  return {
    sql: `SELECT * FROM work_units WHERE ${c.sql} ORDER BY created_at DESC, id DESC LIMIT ?`,
    values: [...c.values, query.limit],
  };
}

export function runListSql(query: RunListQuery, dialect: Dialect): Statement {
  const c = new Conditions();
  c.add('project_id = ?', query.projectId);
  attributeConditions(c, dialect, 'metadata', query.metadata);
  if (query.workUnitId !== undefined) c.add('work_unit_id = ?', query.workUnitId);
  switch (query.status) {
    case undefined:
      break;
    case 'closed':
      c.add("status = 'closed'");
      break;
    case 'active':
      c.add("status = 'active' AND expires_at > ?", query.nowIso);
      break;
    case 'expired':
      c.add("status = 'active' AND expires_at <= ?", query.nowIso);
      break;
    default: {
      const never: never = query.status;
      throw new Error(`unknown run status ${String(never)}`);
    }
  }
  switch (query.budgetState) {
    case undefined:
      break;
    case 'depleted':
      c.add('committed >= budget');
      break;
    case 'fully_reserved':
      c.add('committed < budget AND committed + reserved >= budget');
      break;
    case 'available':
      c.add('committed + reserved < budget');
      break;
    default: {
      const never: never = query.budgetState;
      throw new Error(`unknown budget state ${String(never)}`);
    }
  }
  if (query.after !== undefined) {
    c.add('(created_at, id) < (?, ?)', query.after.createdAt, query.after.id);
  }
  return {
    sql: `SELECT * FROM runs WHERE ${c.sql} ORDER BY created_at DESC, id DESC LIMIT ?`,
    values: [...c.values, query.limit],
  };
}

export function outcomeListSql(dialect: Dialect, query: OutcomeListQuery): Statement {
  const c = new Conditions();
  c.add('project_id = ?', query.projectId);
  if (query.workUnitId !== undefined) c.add('work_unit_id = ?', query.workUnitId);
  if (query.definitionId !== undefined) c.add('definition_id = ?', query.definitionId);
  if (query.valueJson !== undefined) c.add('value = ?', query.valueJson);
  if (query.provisional !== undefined) c.add('provisional = ?', flag(dialect, query.provisional));
  if (query.headOnly === true) c.add('is_head = ?', flag(dialect, true));
  if (query.beforeSequence !== undefined) c.add('governance_sequence < ?', query.beforeSequence);
  return {
    sql: `SELECT * FROM outcomes WHERE ${c.sql} ORDER BY governance_sequence DESC LIMIT ?`,
    values: [...c.values, query.limit],
  };
}

/** The sums of a spend report over a rollup: SQLite's (keyed by state) or PostgreSQL's. */
const SPEND_SUMS = {
  rolledUp: `SUM(calls) AS calls, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
    SUM(cache_creation_input_tokens) AS cache_creation_input_tokens,
    SUM(cache_read_input_tokens) AS cache_read_input_tokens, SUM(committed) AS committed,
    SUM(CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN calls ELSE 0 END) AS unknown_attempts,
    SUM(CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN committed ELSE 0 END) AS unknown_committed`,
  /** PostgreSQL's rollup, coarser groups than its key (unknown sums are columns of their own). */
  facts: `COALESCE(SUM(calls), 0) AS calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
    COALESCE(SUM(output_tokens), 0) AS output_tokens,
    COALESCE(SUM(cache_creation_input_tokens), 0) AS cache_creation_input_tokens,
    COALESCE(SUM(cache_read_input_tokens), 0) AS cache_read_input_tokens, COALESCE(SUM(committed), 0) AS committed,
    COALESCE(SUM(unknown_attempts), 0) AS unknown_attempts, COALESCE(SUM(unknown_committed), 0) AS unknown_committed`,
};

function groupColumns(dimensions: readonly SpendDimension[], bucket: string | null): string[] {
  return [...(bucket === null ? [] : [`${bucket} AS bucket`]), ...dimensions];
}

function groupBy(columns: string[]): string {
  return columns.length === 0 ? '' : ` GROUP BY ${columns.map((_, index) => index + 1).join(', ')}`;
}

/**
 * SQLite: the Project's condition on a rollup's tail, which is read by sequence, the table's own key:
 * the entries above a watermark are about a second of them (folded every second, and a report folds
 * first), whatever the Project's size. The unary `+` keeps SQLite from reading the tail through an
 * index that starts with project_id (the request log's), which would visit every entry of the
 * Project (the SQLite audit has no (project_id, sequence) index: migration 18).
 */
const SQLITE_TAIL_PROJECT = '+a.project_id = ?';

/** SQLite: a rollup's watermark (sqlite/report-fold.ts), as a scalar subquery. */
function sqliteWatermarkSql(source: 'audit' | 'audit_attributes'): string {
  return `(SELECT watermark FROM report_folds WHERE source = '${source}')`;
}

/** SQLite: an audit entry's figures as one rollup row of one call (the rollups' sums, in order). */
const SQLITE_ENTRY_FIGURES = `1, COALESCE(a.input_tokens, 0), COALESCE(a.output_tokens, 0),
  COALESCE(a.cache_creation_input_tokens, 0), COALESCE(a.cache_read_input_tokens, 0), a.cost`;
/** SQLite: the sums columns of both hourly rollups, in order (sqlite/report-fold.ts folds into them). */
export const SQLITE_ROLLUP_FIGURES =
  'calls, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, committed';

/**
 * SQLite: the hourly rollup (folded at read time and in the background, sqlite/report-fold.ts)
 * plus the audit entries above its watermark, in ONE statement (one state of the database), so the
 * figures are exact however far the folds have got. Both sides are keyed by hour of reservation
 * and `state`, filtered by whole UTC hours alike.
 */
export function spendSql(query: SpendQuery): Statement {
  assertWholeHours(query);
  const columns = groupColumns(query.dimensions, sqliteBucket('hour', query.bucket));
  const select = columns.length === 0 ? '' : `${columns.join(', ')}, `;
  const range = [query.projectId, hourKey(query.fromIso), hourKey(query.toIso)];
  return {
    sql: `WITH facts AS (
      SELECT hour, alias, connection, upstream_model, key_id, state, ${SQLITE_ROLLUP_FIGURES}
      FROM audit_hourly WHERE project_id = ? AND hour >= ? AND hour < ?
      UNION ALL
      SELECT substr(a.created_at, 1, 13), a.alias, a.connection, a.upstream_model, a.key_id, a.state,
        ${SQLITE_ENTRY_FIGURES}
      FROM audit a WHERE a.sequence > ${sqliteWatermarkSql('audit')} AND ${SQLITE_TAIL_PROJECT}
        AND substr(a.created_at, 1, 13) >= ? AND substr(a.created_at, 1, 13) < ?
    )
    SELECT ${select}${SPEND_SUMS.rolledUp} FROM facts${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
    values: [...range, ...range],
  };
}

/**
 * PostgreSQL: the hourly rollup (folded at read time, postgres/report-fold.ts) and the audit rows
 * above its watermark, two statements to run in ONE snapshot (the caller's REPEATABLE READ
 * transaction), whose rows the caller adds up per key. `from` and `to` are whole UTC hours (the
 * rollup's buckets), so both answer exactly. Grouped by hour and every dimension, the rollup rows
 * are the groups already: read in primary-key order, neither sorted nor aggregated.
 */
export function postgresSpendSql(query: SpendQuery): { rollup: Statement; tail: Statement } {
  assertWholeHours(query);
  const range = [query.projectId, query.fromIso, query.toIso];
  const wholeKey = query.bucket === 'hour' && query.dimensions.length === SPEND_DIMENSIONS.length;
  const rollupColumns = groupColumns(query.dimensions, postgresBucket('hour', query.bucket));
  const rollupSelect = rollupColumns.length === 0 ? '' : `${rollupColumns.join(', ')}, `;
  const rollup = wholeKey
    ? `SELECT ${rollupSelect}${ROLLUP_FIGURES} FROM audit_hourly WHERE project_id = ? AND hour >= ? AND hour < ?
       ORDER BY project_id, hour, alias, connection, upstream_model, key_id`
    : `SELECT ${rollupSelect}${SPEND_SUMS.facts} FROM audit_hourly WHERE project_id = ? AND hour >= ? AND hour < ?${groupBy(rollupColumns)}`;
  const tailColumns = groupColumns(query.dimensions, postgresBucket('created_at', query.bucket));
  const tailSelect = tailColumns.length === 0 ? '' : `${tailColumns.join(', ')}, `;
  return {
    rollup: { sql: rollup, values: range },
    tail: {
      sql: `SELECT ${tailSelect}COUNT(*) AS calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
          COALESCE(SUM(output_tokens), 0) AS output_tokens,
          COALESCE(SUM(cache_creation_input_tokens), 0) AS cache_creation_input_tokens,
          COALESCE(SUM(cache_read_input_tokens), 0) AS cache_read_input_tokens, COALESCE(SUM(cost), 0) AS committed,
          COUNT(*) FILTER (WHERE ${UNKNOWN_ATTEMPT_SQL}) AS unknown_attempts,
          COALESCE(SUM(cost) FILTER (WHERE ${UNKNOWN_ATTEMPT_SQL}), 0) AS unknown_committed
        FROM audit WHERE project_id = ? AND sequence > ${watermarkSql('audit')} AND created_at >= ? AND created_at < ?${groupBy(tailColumns)}`,
      values: range,
    },
  };
}

const ROLLUP_FIGURES = `calls, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens,
  committed, unknown_attempts, unknown_committed`;

export function refusalSql(dialect: Dialect, query: SpendQuery): Statement {
  assertWholeHours(query);
  if (dialect === 'sqlite') {
    const columns = groupColumns(query.dimensions, sqliteBucket('substr(created_at, 1, 13)', query.bucket));
    const select = columns.length === 0 ? '' : `${columns.join(', ')}, `;
    return {
      sql: `SELECT ${select}COUNT(*) AS refusals FROM refusals WHERE project_id = ? AND created_at >= ? AND created_at < ?${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
      values: [query.projectId, query.fromIso, query.toIso],
    };
  }
  const columns = groupColumns(query.dimensions, postgresBucket('hour', query.bucket));
  const select = columns.length === 0 ? '' : `${columns.join(', ')}, `;
  const range = [query.projectId, query.fromIso, query.toIso];
  return {
    sql: `WITH facts AS (
      SELECT hour, alias, connection, upstream_model, key_id, refusals
      FROM refusals_hourly WHERE project_id = ? AND hour >= ? AND hour < ?
      UNION ALL
      SELECT ${POSTGRES_HOUR_OF_ROW}, alias, connection, upstream_model, key_id, 1
      FROM refusals WHERE project_id = ? AND id > ${watermarkSql('refusals')} AND created_at >= ? AND created_at < ?
    )
    SELECT ${select}COALESCE(SUM(refusals), 0) AS refusals FROM facts${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
    values: [...range, ...range],
  };
}

/** PostgreSQL: the watermark of a folded source (postgres/report-fold.ts), as a scalar subquery. */
export function watermarkSql(source: 'audit' | 'audit_attributes' | 'refusals'): string {
  return `(SELECT watermark FROM report_folds WHERE source = '${source}')`;
}

/** The UTC hour of a raw row, as the PostgreSQL rollups key it. */
const POSTGRES_HOUR_OF_ROW = "date_trunc('hour', created_at, 'UTC')";

/**
 * The rollups answer whole hours only; the API admits nothing else (reports/range.ts). A store
 * caller passing a cut hour is a programming error, never a silently wrong figure.
 */
function assertWholeHours(query: SpendQuery): void {
  for (const iso of [query.fromIso, query.toIso]) {
    if (Date.parse(iso) % 3_600_000 !== 0)
      throw new Error(`report range bound ${iso} is not a whole UTC hour`);
  }
}

function orderBy(columns: string[]): string {
  return columns.length === 0 ? '1' : columns.map((_, index) => index + 1).join(', ');
}

/** `2026-11-23T10:00:00.000Z` -> `2026-11-23T10`, the rollup's hour key. */
export function hourKey(iso: string): string {
  return iso.slice(0, 13);
}

/**
 * SQLite buckets are the rollup's text keys (`YYYY-MM-DDTHH` or `YYYY-MM-DD`), grouped as they are
 * so an hourly report follows the rollup's primary key without a sort; the adapter completes them
 * to RFC 3339 (sqliteBucketTime).
 */
function sqliteBucket(hourExpression: string, bucket: SpendQuery['bucket']): string | null {
  if (bucket === null) return null;
  return bucket === 'hour' ? hourExpression : `substr(${hourExpression}, 1, 10)`;
}

export function sqliteBucketTime(key: string): string {
  return key.length === 13 ? `${key}:00:00.000Z` : `${key}T00:00:00.000Z`;
}

/** A Run's audit rows in sequence order, along the (run_id, sequence) index. */
export function runAttemptsSql(runId: string, afterSequence: number, limit: number): Statement {
  return {
    sql: 'SELECT * FROM audit WHERE run_id = ? AND sequence > ? ORDER BY run_id, sequence LIMIT ?',
    values: [runId, afterSequence, limit],
  };
}

/**
 * The bucket as RFC 3339 text (`2026-11-23T10:00:00.000Z`, as toISOString writes it): formatted once
 * per group by the database, cheaper than parsing a timestamptz into a Date per row and back.
 * `hour` (the rollups' column) is its own hourly bucket.
 */
function postgresBucket(column: string, bucket: SpendQuery['bucket']): string | null {
  if (bucket === null) return null;
  const start = bucket === 'hour' && column === 'hour' ? 'hour' : `date_trunc('${bucket}', ${column}, 'UTC')`;
  return `to_char(${start} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * Every Work Unit created in the period with its spend (sum of its Runs' committed) and the head
 * revision of its Outcome for the definition, if any.
 */
export function workUnitSpendSql(
  dialect: Dialect,
  query: WorkUnitSpendQuery,
  metadataKey?: string,
): Statement {
  const head = dialect === 'sqlite' ? 'o.is_head = 1' : 'o.is_head';
  const attribute = metadataKey === undefined ? '' : 'w.metadata ->> CAST(? AS TEXT) AS attribute, ';
  return {
    sql: `SELECT w.id AS work_unit_id, ${attribute}
        COALESCE((SELECT SUM(r.committed) FROM runs r WHERE r.work_unit_id = w.id), 0) AS spend,
        COALESCE((SELECT SUM(r.unknown_attempts) FROM runs r WHERE r.work_unit_id = w.id), 0) AS unknown_attempts,
        o.value AS head_value, o.provisional AS head_provisional
      FROM work_units w
      LEFT JOIN outcomes o ON o.work_unit_id = w.id AND o.definition_id = ? AND ${head}
      WHERE w.project_id = ? AND w.created_at >= ? AND w.created_at < ?
      ORDER BY w.id`,
    values: [
      ...(metadataKey === undefined ? [] : [metadataKey]),
      query.definitionId,
      query.projectId,
      query.fromIso,
      query.toIso,
    ],
  };
}

/** The same definition as UNKNOWN_ATTEMPT_SQL, for one audit entry already read. */
export function isUnknownAttempt(entry: { state: string }): boolean {
  return entry.state === 'unknown';
}

/** The audit column (JSON object of string -> string, or null) an attribute kind is read from. */
export function attributeColumn(kind: AttributeKind): 'tags' | 'metadata' {
  return kind === 'tag' ? 'tags' : 'metadata';
}

/**
 * PostgreSQL: rows of audit_attribute_hourly (folded, unknown sums as columns) for one key
 * (`kind`, `name`), grouped by bucket and value, or by bucket alone for the per-hour totals
 * (kind 'all'). No dimensions.
 */
function attributeRollupSql(query: SpendQuery, kind: AttributeKind | 'all', name: string): Statement {
  assertWholeHours(query);
  if (query.dimensions.length > 0) throw new Error('the attribute rollup has no dimensions');
  const bucket = postgresBucket('hour', query.bucket);
  const columns = kind === 'all' ? groupColumns([], bucket) : attributeColumns(query, bucket, 'value');
  const select = columns.length === 0 ? '' : `${columns.join(', ')}, `;
  return {
    sql: `SELECT ${select}${SPEND_SUMS.facts} FROM audit_attribute_hourly
      WHERE project_id = ? AND kind = ? AND name = ? AND hour >= ? AND hour < ?${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
    values: [query.projectId, kind, name, query.fromIso, query.toIso],
  };
}

function attributeColumns(query: SpendQuery, bucket: string | null, value: string): string[] {
  return [...(bucket === null ? [] : [`${bucket} AS bucket`]), `${value} AS attribute`, ...query.dimensions];
}

/** The sums of a spend report over audit rows, in SQL both dialects run. */
const AUDIT_SUMS = `COUNT(*) AS calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
  COALESCE(SUM(output_tokens), 0) AS output_tokens,
  COALESCE(SUM(cache_creation_input_tokens), 0) AS cache_creation_input_tokens,
  COALESCE(SUM(cache_read_input_tokens), 0) AS cache_read_input_tokens, COALESCE(SUM(cost), 0) AS committed,
  COALESCE(SUM(CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN 1 ELSE 0 END), 0) AS unknown_attempts,
  COALESCE(SUM(CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN cost ELSE 0 END), 0) AS unknown_committed`;

/**
 * An attribute with dimensions (alias, connection, upstream model, key), which its rollup does not
 * keep: the audit rows reserved in the range, grouped by bucket, the attribute's value (NULL for
 * rows without it: that group directly) and the dimensions, in one statement.
 */
export function attributeAuditSql(dialect: Dialect, query: SpendQuery, attribute: AttributeRef): Statement {
  assertWholeHours(query);
  const bucket =
    dialect === 'sqlite'
      ? sqliteBucket('substr(created_at, 1, 13)', query.bucket)
      : postgresBucket('created_at', query.bucket);
  const columns = attributeColumns(query, bucket, `${attributeColumn(attribute.kind)} ->> CAST(? AS TEXT)`);
  return {
    sql: `SELECT ${columns.join(', ')}, ${AUDIT_SUMS} FROM audit
      WHERE project_id = ? AND created_at >= ? AND created_at < ?${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
    values: [attribute.name, query.projectId, query.fromIso, query.toIso],
  };
}

/**
 * SQLite: the attribute's rollup rows (keyed by state like audit_hourly) plus the audit entries
 * above that rollup's own watermark that carry the key, in one statement, grouped by bucket and
 * value; no dimensions. The tail reads the key as the fold does (json_each of an object), so both
 * sides give a value the same text. The adapter adds the group without the key (report-rows.ts).
 */
export function sqliteAttributeSpendSql(query: SpendQuery, attribute: AttributeRef): Statement {
  assertWholeHours(query);
  if (query.dimensions.length > 0) throw new Error('the attribute rollup has no dimensions');
  const column = attributeColumn(attribute.kind);
  const columns = attributeColumns(query, sqliteBucket('hour', query.bucket), 'value');
  const hours = [hourKey(query.fromIso), hourKey(query.toIso)];
  return {
    sql: `WITH facts AS (
      SELECT hour, value, state, ${SQLITE_ROLLUP_FIGURES} FROM audit_attribute_hourly
      WHERE project_id = ? AND kind = ? AND name = ? AND hour >= ? AND hour < ?
      UNION ALL
      SELECT substr(a.created_at, 1, 13), CAST(pair.value AS TEXT), a.state, ${SQLITE_ENTRY_FIGURES}
      FROM audit a, json_each(a.${column}) AS pair
      WHERE a.sequence > ${sqliteWatermarkSql('audit_attributes')} AND ${SQLITE_TAIL_PROJECT}
        AND json_type(a.${column}) = 'object' AND pair.key = ?
        AND substr(a.created_at, 1, 13) >= ? AND substr(a.created_at, 1, 13) < ?
    )
    SELECT ${columns.join(', ')}, ${SPEND_SUMS.rolledUp} FROM facts${groupBy(columns)} ORDER BY ${orderBy(columns)}`,
    values: [
      query.projectId,
      attribute.kind,
      attribute.name,
      ...hours,
      query.projectId,
      attribute.name,
      ...hours,
    ],
  };
}

/**
 * PostgreSQL, in one snapshot: the attribute's rollup rows and the audit rows above the rollup's
 * own watermark (`audit_attributes`) that carry the key; and the same rollup's per-hour totals of
 * every attempt (kind 'all') with the audit rows above that watermark, from which the group
 * without the key is taken. Both from one rollup and one watermark, so they agree; neither reads
 * audit_hourly, whose rows grow with every alias x connection x model x key of an hour.
 */
export function postgresAttributeSpendSql(
  query: SpendQuery,
  attribute: AttributeRef,
): { attributed: { rollup: Statement; tail: Statement }; totals: { rollup: Statement; tail: Statement } } {
  const value = `${attributeColumn(attribute.kind)} ->> CAST(? AS TEXT)`;
  const columns = attributeColumns(query, postgresBucket('created_at', query.bucket), value);
  const totalColumns = groupColumns([], postgresBucket('created_at', query.bucket));
  const totalSelect = totalColumns.length === 0 ? '' : `${totalColumns.join(', ')}, `;
  const tail = `FROM audit WHERE project_id = ? AND sequence > ${watermarkSql('audit_attributes')}
    AND created_at >= ? AND created_at < ?`;
  return {
    attributed: {
      rollup: attributeRollupSql(query, attribute.kind, attribute.name),
      tail: {
        sql: `SELECT ${columns.join(', ')}, ${AUDIT_SUMS} ${tail} AND ${value} IS NOT NULL${groupBy(columns)}`,
        values: [attribute.name, query.projectId, query.fromIso, query.toIso, attribute.name],
      },
    },
    totals: {
      rollup: attributeRollupSql(query, 'all', ''),
      tail: {
        sql: `SELECT ${totalSelect}${AUDIT_SUMS} ${tail}${groupBy(totalColumns)}`,
        values: [query.projectId, query.fromIso, query.toIso],
      },
    },
  };
}

/**
 * Cost per Outcome split by a tag: per Work Unit of the period and value of the tag on its
 * attempts (null: attempts without it), the committed cost of those attempts (their audit rows,
 * whose costs add up to the Runs' committed), with the Work Unit's head Outcome. A Work Unit
 * without attempts has one row: value null, spend 0.
 */
export function workUnitTagSpendSql(dialect: Dialect, query: WorkUnitSpendQuery, tag: string): Statement {
  const head = dialect === 'sqlite' ? 'o.is_head = 1' : 'o.is_head';
  // PostgreSQL: each Run's attempts through audit(run_id, ...) (LATERAL), as the Runs of a period
  // are a small share of the trail; a plain join lets the planner scan the whole audit table.
  const attempts =
    dialect === 'postgres'
      ? `LEFT JOIN LATERAL (SELECT tags ->> CAST(? AS TEXT) AS attribute, SUM(cost) AS cost,
          SUM(CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN 1 ELSE 0 END) AS unknown
          FROM audit WHERE run_id = r.id GROUP BY 1) a ON true`
      : `LEFT JOIN (SELECT run_id, tags ->> CAST(? AS TEXT) AS attribute, cost,
          CASE WHEN ${UNKNOWN_ATTEMPT_SQL} THEN 1 ELSE 0 END AS unknown FROM audit) a ON a.run_id = r.id`;
  return {
    sql: `SELECT w.id AS work_unit_id, a.attribute AS attribute, COALESCE(SUM(a.cost), 0) AS spend,
        COALESCE(SUM(a.unknown), 0) AS unknown_attempts, o.value AS head_value, o.provisional AS head_provisional
      FROM work_units w
      LEFT JOIN runs r ON r.work_unit_id = w.id
      ${attempts}
      LEFT JOIN outcomes o ON o.work_unit_id = w.id AND o.definition_id = ? AND ${head}
      WHERE w.project_id = ? AND w.created_at >= ? AND w.created_at < ?
      GROUP BY w.id, 2, o.value, o.provisional
      ORDER BY w.id, 2`,
    values: [tag, query.definitionId, query.projectId, query.fromIso, query.toIso],
  };
}
