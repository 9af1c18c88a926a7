/**
 * SQLite migration 9: the ledger's value checks as chains of `=`, not `IN` lists (issue 16).
 *
 * SQLite evaluates `x IN ('a', 'b', 'c')` (more than two constants) by building a temporary B-tree
 * of the constants, with its own pager and page cache, each time the statement runs, and freeing
 * it at the end. Three such checks ran on every call's ledger writes: `attempts.state` and
 * `attempts.outcome` on the reservation's insert and again on the settlement's update, and the
 * `audit_outcome_known` trigger on the audit insert. Building and freeing those trees cost about
 * 4 us of the 25 us a reservation and settlement took together (bench/ledger.ts, c16 and c64).
 * `x = 'a' OR x = 'b' OR ...` accepts and refuses exactly the same values (NULL included: both
 * forms give NULL, which a CHECK lets through and a trigger's WHEN does not fire on) and compiles
 * to plain comparisons.
 *
 * The trigger is dropped and created again. The two CHECK constraints are rewritten in place with
 * the procedure SQLite documents for changing constraints without rebuilding the table (ALTER
 * TABLE, "Making Other Kinds Of Table Schema Changes"): edit the table's text in sqlite_schema and
 * bump schema_version, in the migration's transaction, then `writable_schema = RESET`. Every
 * existing row satisfies the new checks, because they are equivalent to the old ones, and no row
 * is copied, so the migration takes the same few milliseconds on a ledger of any size. The edit is
 * checked before it is written: if the table's text is not the one earlier migrations created,
 * the migration fails and nothing changes.
 */
import type Database from 'better-sqlite3';
import { SETTLEMENT_OUTCOMES } from '../../money/settlement.js';
import { OUTCOME_LIST } from '../settlement-outcome-sql.js';
import { editTableText } from './table-text-edit.js';

const ATTEMPT_STATES = ['reserved', 'settled', 'unknown', 'released'] as const;

/** `(column = 'a' OR column = 'b' ...)`: an IN list SQLite compiles without a temporary table. */
function oneOf(column: string, values: readonly string[]): string {
  return `(${values.map((value) => `${column} = '${value}'`).join(' OR ')})`;
}

/** The checks of `attempts` as migrations 1 and 4 wrote them, and what they become. */
const ATTEMPT_CHECKS: ReadonlyArray<readonly [string, string]> = [
  [
    "CHECK (state IN ('reserved', 'settled', 'unknown', 'released'))",
    `CHECK ${oneOf('state', ATTEMPT_STATES)}`,
  ],
  [
    `CHECK (outcome IS NULL OR outcome IN (${OUTCOME_LIST}))`,
    `CHECK (outcome IS NULL OR ${oneOf('outcome', SETTLEMENT_OUTCOMES)})`,
  ],
];

export const SQLITE_MIGRATION_CHECKS_WITHOUT_IN_LISTS = {
  version: 9,
  name: 'ledger checks without IN lists',
  sql: `
DROP TRIGGER audit_outcome_known;
CREATE TRIGGER audit_outcome_known BEFORE INSERT ON audit
  WHEN NOT ${oneOf('NEW.outcome', SETTLEMENT_OUTCOMES)}
  BEGIN SELECT RAISE(ABORT, 'audit outcome must be one of the settlement outcomes'); END;
`,
  apply(db: Database.Database): void {
    editTableText(db, 9, 'attempts', ATTEMPT_CHECKS);
  },
};
