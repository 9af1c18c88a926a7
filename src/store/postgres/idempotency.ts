/**
 * Idempotency on PostgreSQL, inside the write's own transaction (reliability notes 1.4):
 * 1. INSERT a placeholder row (status 0) ON CONFLICT DO NOTHING. A concurrent duplicate waits on the
 *    unique index entry of the in-flight transaction; lock_timeout bounds that wait, and its expiry
 *    (SQLSTATE 55P03) means "the first request is still in flight": 409 idempotency_conflict.
 * 2. No row inserted: the key is taken by a committed request. Same fingerprint: replay the stored
 *    body with 200; different: 409. An expired row is taken over by a conditional UPDATE.
 * 3. After the domain write, the row gets the real status and response, committed with the write;
 *    a failed write rolls the placeholder back, so only successes are stored and no lock outlives a
 *    crashed process.
 */
import type pg from 'pg';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Idempotency } from '../port.js';
import { idempotencyConflict } from '../rules.js';
import { isLockTimeout } from './errors.js';

export type Claim = { kind: 'claimed' } | { kind: 'replay'; body: unknown };

const SCOPE = 'project_id = $1 AND key_id = $2 AND idempotency_key = $3';

function inFlight(): GatewayError {
  return new GatewayError(
    'idempotency_conflict',
    'A request with this Idempotency-Key is still in flight; retry after it has completed.',
  );
}

/** Runs a statement that may wait for another transaction's row; a lock timeout means in flight. */
async function waiting(client: pg.PoolClient, text: string, values: unknown[]): Promise<pg.QueryResult> {
  try {
    return await client.query(text, values);
  } catch (error) {
    if (isLockTimeout(error)) throw inFlight();
    throw error;
  }
}

/** Takes the key for this transaction, or answers with the stored response (step 1 and 2). */
export async function claimIdempotencyKey(client: pg.PoolClient, idempotency: Idempotency): Promise<Claim> {
  const scope = [idempotency.projectId, idempotency.keyId, idempotency.key];
  const claim = [...scope, idempotency.fingerprint, idempotency.createdAt, idempotency.expiresAt];
  // A row can vanish (pruned) or be taken over between statements; a few rounds settle it.
  for (let round = 0; round < 3; round++) {
    const inserted = await waiting(
      client,
      `INSERT INTO idempotency (project_id, key_id, idempotency_key, fingerprint, status, response, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 0, '', $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
      claim,
    );
    if (inserted.rowCount === 1) return { kind: 'claimed' };
    const stored = await client.query<{
      fingerprint: string;
      status: number;
      response: string;
      live: boolean;
    }>(`SELECT fingerprint, status, response, expires_at > $4 AS live FROM idempotency WHERE ${SCOPE}`, [
      ...scope,
      idempotency.createdAt,
    ]);
    const row = stored.rows[0];
    if (!row) continue;
    if (row.live) {
      if (row.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
      // A committed placeholder cannot exist (the write and the response commit together).
      if (row.status === 0) throw inFlight();
      return { kind: 'replay', body: JSON.parse(row.response) };
    }
    const replaced = await waiting(
      client,
      `UPDATE idempotency SET fingerprint = $4, status = 0, response = '', created_at = $5, expires_at = $6
       WHERE ${SCOPE} AND expires_at <= $5 RETURNING 1`,
      claim,
    );
    if (replaced.rowCount === 1) return { kind: 'claimed' };
  }
  throw inFlight();
}

/** Step 3: the response of the write, committed with it. */
export async function storeIdempotentResponse(
  client: pg.PoolClient,
  idempotency: Idempotency,
  status: number,
  body: unknown,
): Promise<void> {
  await client.query(`UPDATE idempotency SET status = $4, response = $5 WHERE ${SCOPE}`, [
    idempotency.projectId,
    idempotency.keyId,
    idempotency.key,
    status,
    JSON.stringify(body),
  ]);
}
