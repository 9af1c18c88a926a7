/**
 * Folds the append-only audit trail and refusals into their hourly rollups (migration 8), at read
 * time, keeping every report exact:
 *
 * - A report reads, in ONE statement (one snapshot), the rollup rows plus the raw rows whose id is
 *   above the source's watermark. A fold moves rows from "raw above the watermark" to "rollup" and
 *   raises the watermark in one transaction, so every snapshot sees each row exactly once.
 * - Ids (identity columns) are handed out before their transactions commit, and commit out of
 *   order: a row with a smaller id may become visible after a larger one. The watermark may only
 *   pass id n once no transaction can still insert an id <= n. An INSERT takes its ROW EXCLUSIVE
 *   lock on the table before it draws its id, and holds it until its transaction ends. So: read
 *   `high` = the largest visible id and, after that snapshot, the transactions holding ROW
 *   EXCLUSIVE on the table; once every one of them has ended, every id <= high is committed (and
 *   visible to any later snapshot) or never will be. Nothing blocks a writer while we wait.
 * - Folds are serialised by the source's row lock in report_folds (taken with SKIP LOCKED: a report
 *   that finds another fold at work reads the longer raw tail instead of waiting), and proceed in
 *   chunks of ids, one transaction each, so a first fold over a large backlog stays within the
 *   statement timeout and keeps its progress.
 */
import type pg from 'pg';
import { UNKNOWN_ATTEMPT_SQL } from '../report-sql.js';
import type { Row } from '../rows.js';

export type FoldSourceName = 'audit' | 'audit_attributes' | 'refusals';

interface FoldSource {
  table: string;
  id: string;
  /** The share of FoldOptions.chunk folded per transaction (a row may expand to several). */
  chunkShare: number;
  /** SET LOCAL statements of the fold's transaction. */
  settings: string[];
  /** Folds the rows with $1 < id <= $2 into the rollup. */
  foldSql: string;
}

const KEY = 'project_id, hour, alias, connection, upstream_model, key_id';
const HOUR_OF_ROW = "date_trunc('hour', created_at, 'UTC')";

function added(columns: string[]): string {
  return columns.map((column) => `${column} = r.${column} + excluded.${column}`).join(', ');
}

const ATTRIBUTE_KEY = 'project_id, kind, name, hour, value';

/** A JSONB column's value when it is an object (jsonb_each_text of NULL yields no rows). */
function objectOrNull(column: string): string {
  return `CASE WHEN jsonb_typeof(${column}) = 'object' THEN ${column} END`;
}

const AUDIT_SUMS = [
  'calls',
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'committed',
  'unknown_attempts',
  'unknown_committed',
];

const SOURCES: Record<FoldSourceName, FoldSource> = {
  audit: {
    table: 'audit',
    id: 'sequence',
    chunkShare: 1,
    settings: [],
    foldSql: `INSERT INTO audit_hourly AS r (${KEY}, ${AUDIT_SUMS.join(', ')})
      SELECT project_id, ${HOUR_OF_ROW}, alias, connection, upstream_model, key_id, COUNT(*),
        COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),
        COALESCE(SUM(cache_creation_input_tokens), 0), COALESCE(SUM(cache_read_input_tokens), 0),
        SUM(cost), COUNT(*) FILTER (WHERE ${UNKNOWN_ATTEMPT_SQL}),
        COALESCE(SUM(cost) FILTER (WHERE ${UNKNOWN_ATTEMPT_SQL}), 0)
      FROM audit WHERE sequence > $1 AND sequence <= $2
      GROUP BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (${KEY}) DO UPDATE SET ${added(AUDIT_SUMS)}`,
  },
  // Migration 14: each attempt adds to one row per tag and per metadata key it carries, per
  // (Project, kind, key, hour, value); attempts without attributes add nothing. Its own watermark.
  audit_attributes: {
    table: 'audit',
    id: 'sequence',
    // About 5 attributes per row. The planner guesses 100 rows per jsonb_each_text call (10 M for
    // a chunk), so left alone it compiles the statement to machine code (seconds per chunk) and
    // sorts on disk; the groups (hundreds per hour) fit in memory: hash them.
    chunkShare: 0.4,
    settings: ['jit = off', "work_mem = '64MB'", 'enable_sort = off'],
    foldSql: `INSERT INTO audit_attribute_hourly AS r (${ATTRIBUTE_KEY}, ${AUDIT_SUMS.join(', ')})
      SELECT a.project_id, attribute.kind, attribute.name, ${HOUR_OF_ROW}, attribute.value, COUNT(*),
        COALESCE(SUM(a.input_tokens), 0), COALESCE(SUM(a.output_tokens), 0),
        COALESCE(SUM(a.cache_creation_input_tokens), 0), COALESCE(SUM(a.cache_read_input_tokens), 0),
        SUM(a.cost), COUNT(*) FILTER (WHERE a.${UNKNOWN_ATTEMPT_SQL}),
        COALESCE(SUM(a.cost) FILTER (WHERE a.${UNKNOWN_ATTEMPT_SQL}), 0)
      FROM audit a CROSS JOIN LATERAL (
        SELECT 'tag' AS kind, key AS name, value FROM jsonb_each_text(${objectOrNull('a.tags')})
        UNION ALL
        SELECT 'metadata', key, value FROM jsonb_each_text(${objectOrNull('a.metadata')})
      ) AS attribute
      WHERE a.sequence > $1 AND a.sequence <= $2
      GROUP BY 1, 2, 3, 4, 5
      ON CONFLICT (${ATTRIBUTE_KEY}) DO UPDATE SET ${added(AUDIT_SUMS)}`,
  },
  refusals: {
    table: 'refusals',
    id: 'id',
    chunkShare: 1,
    settings: [],
    foldSql: `INSERT INTO refusals_hourly AS r (${KEY}, refusals)
      SELECT project_id, ${HOUR_OF_ROW}, alias, connection, upstream_model, key_id, COUNT(*)
      FROM refusals WHERE id > $1 AND id <= $2
      GROUP BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (${KEY}) DO UPDATE SET ${added(['refusals'])}`,
  },
};

export interface FoldOptions {
  /** Ids folded per transaction. */
  chunk: number;
  /** How long a fold waits for the writers that may still insert ids <= high before giving up. */
  waitMs: number;
}

export const DEFAULT_FOLD_OPTIONS: FoldOptions = { chunk: 50_000, waitMs: 500 };
const POLL_MS = 5;

type Query = (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;
type Transaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

export class ReportFolder {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    private readonly options: FoldOptions = DEFAULT_FOLD_OPTIONS,
  ) {}

  /**
   * Folds what can be folded safely now. Returns false when it could not (writers still open past
   * the wait, or another fold holding the source): the reports stay exact either way, they only
   * read more raw rows.
   */
  async fold(name: FoldSourceName): Promise<boolean> {
    const source = SOURCES[name];
    const high = await this.safeHigh(source);
    if (high === null) return false;
    for (;;) {
      const step = await this.transaction(async (client) => {
        const state = await client.query<Row>(
          'SELECT watermark FROM report_folds WHERE source = $1 FOR UPDATE SKIP LOCKED',
          [name],
        );
        if (state.rows.length === 0) return 'busy' as const;
        const watermark = BigInt(String(state.rows[0]!.watermark));
        for (const setting of source.settings) await client.query(`SET LOCAL ${setting}`);
        if (watermark >= high) return 'done' as const;
        const chunk = BigInt(Math.max(1, Math.floor(this.options.chunk * source.chunkShare)));
        const upper = high - watermark > chunk ? watermark + chunk : high;
        await client.query(source.foldSql, [watermark.toString(), upper.toString()]);
        await client.query('UPDATE report_folds SET watermark = $2 WHERE source = $1', [
          name,
          upper.toString(),
        ]);
        return upper >= high ? ('done' as const) : ('more' as const);
      });
      if (step !== 'more') return step === 'done';
    }
  }

  /** The largest id every row at or below which is settled (committed or never to be), or null. */
  private async safeHigh(source: FoldSource): Promise<bigint | null> {
    const { rows } = await this.query(
      `SELECT (SELECT COALESCE(max(${source.id}), 0) FROM ${source.table})::text AS high,
        ARRAY(SELECT l.virtualtransaction FROM pg_locks l
          WHERE l.locktype = 'relation' AND l.relation = '${source.table}'::regclass
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.mode = 'RowExclusiveLock' AND l.pid IS DISTINCT FROM pg_backend_pid()) AS writers`,
      [],
    );
    const high = BigInt(String(rows[0]!.high));
    const writers = rows[0]!.writers as string[];
    if (writers.length === 0) return high;
    // A transaction holds its locks until it ends (a prepared one too, under its '-1/xid' id).
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      const open = await this.query(
        'SELECT count(*)::int AS open FROM pg_locks WHERE virtualtransaction = ANY($1::text[])',
        [writers],
      );
      if (Number(open.rows[0]!.open) === 0) return high;
      if (Date.now() >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
