/**
 * How PostgreSQL and node-postgres failures map onto the port's errors. The rule: the database
 * being unreachable, restarting or too slow is StoreUnavailableError (the HTTP layer answers 503,
 * never fails open); a constraint that carries domain meaning becomes its GatewayError; anything
 * else is a bug and propagates unchanged.
 */
import { GatewayError, StoreUnavailableError } from '../../errors/gateway-error.js';

/** SQLSTATEs raised by the unique indexes that guard the Outcome revision chain. */
const REVISION_CONSTRAINTS = new Set(['outcomes_one_head', 'outcomes_supersedes_once']);

/** Node socket errors seen when the server is down, restarting or unreachable. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/** node-postgres errors without a code: pool checkout timeout, lost or closed connection, query_timeout. */
const DRIVER_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Query read timeout|not queryable|Cannot use a pool after calling end/;

interface DriverError {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
}

function sqlState(error: unknown): string | undefined {
  const code = (error as DriverError | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Whether the server is still there and the session usable (a timeout it raised itself). */
function serverSideTimeout(state: string | undefined): boolean {
  return state === '57014' || state === '55P03';
}

/** True when the failure means "the store is unavailable or too slow", not a bug or a domain rule. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const state = sqlState(error);
  if (state !== undefined) {
    return (
      state.startsWith('08') || // connection exception
      state.startsWith('53') || // insufficient resources (too many connections, disk full)
      state.startsWith('57P') || // admin / crash shutdown, cannot connect now
      state === '25P03' || // idle_in_transaction_session_timeout
      serverSideTimeout(state) // statement_timeout, lock_timeout
    );
  }
  const code = (error as DriverError).code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  return DRIVER_MESSAGES.test(error.message);
}

/** True when the connection that raised the error must not go back to the pool. */
export function connectionBroken(error: unknown): boolean {
  return isUnavailable(error) && !serverSideTimeout(sqlState(error));
}

/** SQLSTATE 55P03: lock_timeout expired while waiting for a lock. */
export function isLockTimeout(error: unknown): boolean {
  return sqlState(error) === '55P03';
}

/** Maps a failure to the port's error vocabulary (see the header). */
export function toStoreError(error: unknown): unknown {
  if (error instanceof GatewayError || error instanceof StoreUnavailableError) return error;
  if (isUnavailable(error)) {
    const detail = sqlState(error) ?? (error as DriverError).code ?? 'driver';
    return new StoreUnavailableError(`postgres: ${String(detail)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const constraint = (error as DriverError | null)?.constraint;
  if (sqlState(error) === '23505' && typeof constraint === 'string' && REVISION_CONSTRAINTS.has(constraint)) {
    return new GatewayError(
      'outcome_revision_conflict',
      'Another revision of this Outcome was written at the same time; read the Work Unit and revise the current Outcome.',
      { param: 'supersedes_outcome_id' },
    );
  }
  return error;
}
