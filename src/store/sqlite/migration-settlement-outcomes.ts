/** SQLite migration 4: settlement outcomes of the union on attempts and audit (see ../settlement-outcome-sql.ts). */
import { OUTCOME_LIST, OUTCOME_OF_AUDIT_ROW } from '../settlement-outcome-sql.js';

export const SQLITE_MIGRATION_SETTLEMENT_OUTCOMES = {
  version: 4,
  name: 'settlement outcomes',
  sql: `
ALTER TABLE attempts ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR outcome IN (${OUTCOME_LIST}));
DROP TRIGGER audit_append_only_update;
UPDATE audit SET outcome = ${OUTCOME_OF_AUDIT_ROW};
CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
CREATE TRIGGER audit_outcome_known BEFORE INSERT ON audit
  WHEN NEW.outcome NOT IN (${OUTCOME_LIST})
  BEGIN SELECT RAISE(ABORT, 'audit outcome must be one of the settlement outcomes'); END;
UPDATE attempts SET outcome = (SELECT audit.outcome FROM audit WHERE audit.attempt_id = attempts.id)
  WHERE state <> 'reserved';
`,
};
