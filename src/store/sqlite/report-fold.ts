/**
 * Folds the SQLite audit trail into its hourly report rollups (migrations 6, 14 and 17), off the
 * settlement's path:
 *
 * - A report reads, in one statement, a rollup plus the audit entries above that rollup's
 *   watermark (store/report-sql.ts), so its figures are exact whether or not a fold has run.
 * - A fold adds the entries of (watermark, watermark + chunk] to the rollup and raises the
 *   watermark, in one transaction. The store has one writer (this process, on one connection) and
 *   an entry's sequence is its rowid, given in commit order: every entry at or below the largest
 *   sequence a transaction sees is committed, so nothing can later appear below the watermark.
 * - The rollups are keyed by `state` like the triggers that kept them before migration 17, so the
 *   one definition of an unknown attempt (report-sql.ts) applies to them unchanged.
 * - A fold proceeds a chunk per transaction and lets the event loop run between chunks, so a long
 *   backlog never holds the calls in flight for more than a chunk (about 1-4 ms).
 * - The store folds in the background every second (`start`), not once a minute as PostgreSQL's
 *   sweep does: the fold runs on the event loop, and a second of traffic is one or two chunks, so
 *   the pauses are short and spread evenly instead of a minute's backlog folded in one burst that
 *   would delay every call arriving during it (at concurrency 1, enough to move the p99).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SQLITE_ROLLUP_FIGURES } from '../report-sql.js';
import type { WalCheckpointer } from './checkpointer.js';
import type { Sql, SqliteTransaction } from './transaction.js';

export type SqliteFoldSource = 'audit' | 'audit_attributes';

/** The rollup's sums grown by the folded group's (`excluded`). */
const ADDED = SQLITE_ROLLUP_FIGURES.split(', ')
  .map((column) => `${column} = ${column} + excluded.${column}`)
  .join(', ');

/** The sums of a group of audit entries, in the rollups' column order. */
const GROUP_SUMS = `COUNT(*), COALESCE(SUM(a.input_tokens), 0), COALESCE(SUM(a.output_tokens), 0),
  COALESCE(SUM(a.cache_creation_input_tokens), 0), COALESCE(SUM(a.cache_read_input_tokens), 0), SUM(a.cost)`;

/** Entries with low < sequence <= high (the two parameters). */
const RANGE = 'a.sequence > ? AND a.sequence <= ?';

const AUDIT_KEY = 'project_id, hour, alias, connection, upstream_model, key_id, state';
const ATTRIBUTE_KEY = 'project_id, kind, name, hour, value, state';

/** One attribute kind's fold: a group per (Project, key, hour, value, state) of the entries carrying the key. */
function attributeFold(kind: 'tag' | 'metadata', column: 'tags' | 'metadata'): string {
  return `INSERT INTO audit_attribute_hourly (${ATTRIBUTE_KEY}, ${SQLITE_ROLLUP_FIGURES})
  SELECT a.project_id, '${kind}', pair.key, substr(a.created_at, 1, 13), pair.value, a.state, ${GROUP_SUMS}
  FROM audit a, json_each(a.${column}) AS pair
  WHERE ${RANGE} AND json_type(a.${column}) = 'object'
  GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (${ATTRIBUTE_KEY}) DO UPDATE SET ${ADDED}`;
}

/** Each source's statements: they fold the entries of (low, high] into its rollup. */
const FOLDS: Record<SqliteFoldSource, readonly string[]> = {
  audit: [
    `INSERT INTO audit_hourly (${AUDIT_KEY}, ${SQLITE_ROLLUP_FIGURES})
  SELECT a.project_id, substr(a.created_at, 1, 13), a.alias, a.connection, a.upstream_model, a.key_id, a.state,
    ${GROUP_SUMS}
  FROM audit a WHERE ${RANGE}
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (${AUDIT_KEY}) DO UPDATE SET ${ADDED}`,
  ],
  audit_attributes: [attributeFold('tag', 'tags'), attributeFold('metadata', 'metadata')],
};

export const SQLITE_FOLD_SOURCES: readonly SqliteFoldSource[] = ['audit', 'audit_attributes'];

/**
 * Audit entries folded per transaction: about 1.3 ms of the event loop into audit_hourly, and
 * 3.5 ms into audit_attribute_hourly for entries with three attributes, on the benchmark machines.
 */
export const DEFAULT_FOLD_CHUNK = 1_000;

/** How often the store folds in the background. */
export const FOLD_INTERVAL_MS = 1_000;

export class SqliteReportFolder {
  constructor(
    /** The store's prepared-statement cache. */
    private readonly sql: Sql,
    private readonly transaction: SqliteTransaction,
    /** The checkpoint worker, while it runs (its lock keeps a fold off a WAL rewind, as a commit). */
    private readonly checkpointer: () => WalCheckpointer | undefined = () => undefined,
    private readonly chunk: number = DEFAULT_FOLD_CHUNK,
  ) {}

  private timer: NodeJS.Timeout | undefined;
  private folding = false;
  private warned = false;

  /** Folds every entry settled by now into `source`'s rollup, a chunk per transaction. */
  async fold(source: SqliteFoldSource): Promise<void> {
    while (this.foldChunk(source)) await nextTurn();
  }

  /** Folds both rollups every `intervalMs` until `stop` (the timer does not keep the process alive). */
  start(intervalMs: number = FOLD_INTERVAL_MS): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.pass(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One background pass over both sources. A failure (the database busy past its timeout, or
   * closing) leaves the entries to the next pass and to the reports' tail; the first failure after
   * a success is reported on stderr.
   */
  private async pass(): Promise<void> {
    if (this.folding) return;
    this.folding = true;
    try {
      for (const source of SQLITE_FOLD_SOURCES) await this.fold(source);
      this.warned = false;
    } catch (error) {
      if (this.timer !== undefined && !this.warned) {
        this.warned = true;
        process.emitWarning(
          `SQLite report fold failed (${(error as Error).message}); retrying every second`,
          {
            code: 'SVC_SQLITE_REPORT_FOLD',
          },
        );
      }
    } finally {
      this.folding = false;
    }
  }

  /**
   * Folds at most one chunk into `source`'s rollup; true when entries remain above its watermark.
   * While the checkpoint worker rewinds the WAL it folds nothing and answers true (try again next
   * turn) rather than wait for the worker in SQLite's busy handler, which would stall the event
   * loop (the group commit's rule, group-commit.ts).
   */
  foldChunk(source: SqliteFoldSource): boolean {
    const checkpointer = this.checkpointer();
    if (checkpointer && !checkpointer.tryHold()) return true;
    try {
      return this.foldChunkNow(source);
    } finally {
      checkpointer?.release();
    }
  }

  private foldChunkNow(source: SqliteFoldSource): boolean {
    return this.transaction(() => {
      const { watermark, high } = this.sql(
        `SELECT watermark, (SELECT COALESCE(max(sequence), 0) FROM audit) AS high
         FROM report_folds WHERE source = ?`,
      ).get(source) as { watermark: number; high: number };
      if (high <= watermark) return false;
      const upper = Math.min(high, watermark + this.chunk);
      for (const statement of FOLDS[source]) this.sql(statement).run(watermark, upper);
      this.sql('UPDATE report_folds SET watermark = ? WHERE source = ?').run(upper, source);
      return upper < high;
    });
  }
}
