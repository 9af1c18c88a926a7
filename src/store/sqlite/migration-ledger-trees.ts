/**
 * SQLite migration 18: every call's ledger writes touch three B-trees fewer, with the same reads
 * and the same guarantees (issue 42; docs/performance.md, "CPU per call under load").
 *
 * - `attempts_open` (lease_expires_at of the reserved attempts) is dropped. The reaper asks for the
 *   reserved attempts whose lease has expired; `attempts_open_by_project` holds every reserved
 *   attempt too (the in-flight calls and the durable jobs' attempts, a few hundred at most), so the
 *   reaper scans that partial index instead, as its query for another process's attempts already
 *   did. A reservation inserted into both and a settlement deleted from both.
 * - `audit_by_project` (project_id, sequence) is dropped. Its readers were the reports' tails (the
 *   entries above a rollup's watermark, at most about a second of them, since the folds run every
 *   second and a report folds first) and `svc-gateway audit --project`. Both now read the entries
 *   in sequence order, the table's own key (report-sql.ts, sqlite-store.ts `listAudit`), and keep
 *   the Project's rows; the request log's `audit_log_by_project` serves the Project's pages.
 * - The audit's outcome check is a CHECK of the column instead of the `audit_outcome_known`
 *   trigger: the same values pass (NULL is refused by NOT NULL either way), and an insert that
 *   fires no trigger needs no statement journal. The table's text is edited in place as migration
 *   9 did (no row is copied; every row already satisfies the check, which the trigger enforced).
 *
 * Main-thread instructions (bench/instructions.ts, the build before and after in one run): per
 * translated stream at c16 1,009,600 -> 964,900, per unary call at c64 728,300 -> 704,300; and each
 * commit writes three B-trees' right-hand pages fewer to the WAL.
 */
import type Database from 'better-sqlite3';
import { SETTLEMENT_OUTCOMES } from '../../money/settlement.js';
import { editTableText } from './table-text-edit.js';

/** `(outcome = 'completed' OR ...)`, written as migration 9 writes its checks (no IN list). */
const OUTCOME_CHECK = `CHECK (${SETTLEMENT_OUTCOMES.map((outcome) => `outcome = '${outcome}'`).join(' OR ')})`;

export const SQLITE_MIGRATION_LEDGER_TREES = {
  version: 18,
  name: 'ledger: attempts_open and audit_by_project dropped, the audit outcome a CHECK',
  sql: `
DROP INDEX attempts_open;
DROP INDEX audit_by_project;
DROP TRIGGER audit_outcome_known;
`,
  apply(db: Database.Database): void {
    editTableText(db, 18, 'audit', [
      ['  outcome TEXT NOT NULL,', `  outcome TEXT NOT NULL ${OUTCOME_CHECK},`],
    ]);
  },
};
