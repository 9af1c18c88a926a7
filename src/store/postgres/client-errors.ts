/**
 * Every connection of a pool listens for `error` from the moment it exists until it is gone.
 *
 * Why: node-postgres emits `error` on a Client when the server ends the session (57P01 after
 * pg_terminate_backend, a failover, a pooler's idle timeout, a reset socket) and no query is
 * waiting for the answer. pg-pool listens only while a client is idle; between handing a client
 * out and the borrower's own listener (an `await` later) there is a window, and a FATAL that
 * arrives in the same TCP read as ReadyForQuery lands exactly there: an unhandled `error` event
 * crashes the process. The listener attached on `connect` (emitted before the client is handed
 * out) closes that window for good.
 *
 * What the borrower sees is unchanged: the failed query rejects (and toStoreError maps it to
 * StoreUnavailableError, a 503), and a client that is no longer queryable is discarded on release.
 */
import type pg from 'pg';

/** Nothing to do here: the same failure reaches the waiting query, or pg-pool's idle listener. */
const alreadyHandled = (): void => {};

export function guardPoolClients(pool: pg.Pool, onIdleError: (error: Error) => void): void {
  pool.on('connect', (client) => {
    client.on('error', alreadyHandled);
  });
  // An idle client's error is reported here after pg-pool has discarded the client.
  pool.on('error', onIdleError);
}
