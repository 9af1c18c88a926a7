/**
 * The node-postgres pool with every timeout set, so an outage is a fast 503 and never a hang
 * (node-postgres defaults connectionTimeoutMillis to 0, "no timeout"):
 * - connectionTimeoutMillis bounds both opening a connection and waiting for a free one;
 * - statement_timeout, lock_timeout and idle_in_transaction_session_timeout are session settings
 *   sent in the startup packet, so every connection has them before its first query;
 * - query_timeout is the client-side bound for a server that stopped answering (network partition).
 * An `error` listener is mandatory: an idle client whose server restarts emits `error`, and an
 * unhandled one crashes the process. The pool has already discarded that client.
 */
import pg from 'pg';
import { guardPoolClients } from './client-errors.js';

export interface PostgresOptions {
  connectionString: string;
  /** Connections per process (replica). Default 10. */
  poolMax?: number;
  /** Opening a connection or waiting for a free one. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Server-side bound on one statement. Default 5000 ms; lock waits are bounded at min(2000, half of this). */
  statementTimeoutMs?: number;
  /** Connections of the separate settlement pool (settlements, lease renewals, readiness). Default 2. */
  settlePoolMax?: number;
  /** Transactions that may wait for a main-pool connection before store_busy (429). Default 4096. */
  queueMax?: number;
  /** Longest wait for a main-pool connection while the database keeps answering. Default 10000 ms. */
  queueWaitMs?: number;
  /** Told about errors of idle connections (database restart); the pool has discarded them already. */
  onIdleError?: (error: Error) => void;
  /**
   * Told when a ledger batch's one-statement write failed on its data (not on the database being
   * unavailable) and the batch was written again item by item (postgres-store.ts, atOnce).
   */
  onLedgerFallback?: (lane: LedgerLane, error: unknown) => void;
}

/** The ledger's two batched writes, each with its own group commit (postgres-store.ts). */
export type LedgerLane = 'reserve' | 'settle';

export const DEFAULT_CONNECT_TIMEOUT_MS = 2000;

export interface PoolSettings {
  pool: pg.Pool;
  /** Settlements and lease renewals: never queued behind new reservations or governance writes. */
  settlePool: pg.Pool;
  /** lock_timeout of every session, also the wait for an in-flight idempotent request. */
  lockTimeoutMs: number;
}

export function createPool(options: PostgresOptions): PoolSettings {
  const statementTimeoutMs = options.statementTimeoutMs ?? 5000;
  // Strictly below statement_timeout, so a lock wait reports as 55P03 (the in-flight 409) and not 57014.
  const lockTimeoutMs = Math.max(1, Math.min(2000, Math.floor(statementTimeoutMs / 2)));
  const open = (max: number) => {
    const created = new pg.Pool({
      connectionString: options.connectionString,
      max,
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      application_name: 'svc-gateway',
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      idle_in_transaction_session_timeout: Math.max(10_000, 2 * statementTimeoutMs),
      query_timeout: statementTimeoutMs + 1000,
    });
    guardPoolClients(created, (error) => options.onIdleError?.(error));
    return created;
  };
  return { pool: open(options.poolMax ?? 10), settlePool: open(options.settlePoolMax ?? 2), lockTimeoutMs };
}
