/**
 * Migration 4 on both adapters: the settlement outcome union (money/settlement.ts) replaces
 * the free-string outcomes of audit rows and is stored on attempt rows too. Existing rows map:
 *   settled with a 2xx status -> completed; settled otherwise -> refused_upstream;
 *   released -> not_sent; reaped (outcome lease_expired) -> lease_expired;
 *   a running deferred response cancelled (outcome cancelled_running) -> cancelled_running;
 *   every other unknown -> unknown.
 */
import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';

/** SQL mapping an audit row (state, outcome, http_status) to its outcome of the union. */
export const OUTCOME_OF_AUDIT_ROW = `CASE
  WHEN outcome IN ('lease_expired', 'cancelled_running') THEN outcome
  WHEN state = 'settled' AND http_status BETWEEN 200 AND 299 THEN 'completed'
  WHEN state = 'settled' THEN 'refused_upstream'
  WHEN state = 'released' THEN 'not_sent'
  ELSE 'unknown'
END`;

/** `'completed', 'refused_upstream', ...` for CHECK constraints. */
export const OUTCOME_LIST = SETTLEMENT_OUTCOMES.map((outcome) => `'${outcome}'`).join(', ');
