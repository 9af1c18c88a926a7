/** PostgreSQL migration 4: settlement outcomes of the union on attempts and audit (see ../settlement-outcome-sql.ts). */
import { OUTCOME_LIST, OUTCOME_OF_AUDIT_ROW } from '../settlement-outcome-sql.js';

export const POSTGRES_MIGRATION_SETTLEMENT_OUTCOMES = {
  version: 4,
  name: 'settlement outcomes',
  sql: `
ALTER TABLE attempts ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR outcome IN (${OUTCOME_LIST}));
ALTER TABLE audit DISABLE TRIGGER audit_append_only_rows;
UPDATE audit SET outcome = ${OUTCOME_OF_AUDIT_ROW};
ALTER TABLE audit ENABLE TRIGGER audit_append_only_rows;
ALTER TABLE audit ADD CONSTRAINT audit_outcome_known CHECK (outcome IN (${OUTCOME_LIST}));
UPDATE attempts SET outcome = audit.outcome FROM audit WHERE audit.attempt_id = attempts.id AND attempts.state <> 'reserved';
`,
};
