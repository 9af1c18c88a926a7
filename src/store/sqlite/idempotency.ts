/**
 * Idempotency on SQLite, inside the write's own transaction: one writer, so reading the stored key
 * and deciding is exact. A stored, unexpired key with the same fingerprint replays its response
 * (200); a different fingerprint is 409 idempotency_conflict; otherwise the write runs and its
 * response is stored (an expired row is overwritten), committed with the write.
 */
import type { Idempotency } from '../port.js';
import type { Row } from '../rows.js';
import { idempotencyConflict } from '../rules.js';
import type { Sql } from './transaction.js';

export type Claim = { kind: 'claimed' } | { kind: 'replay'; body: unknown };

export function claimIdempotencyKey(sql: Sql, idempotency: Idempotency): Claim {
  const stored = sql(
    'SELECT fingerprint, response, expires_at FROM idempotency WHERE project_id = ? AND key_id = ? AND idempotency_key = ?',
  ).get(idempotency.projectId, idempotency.keyId, idempotency.key) as Row | undefined;
  if (stored && String(stored.expires_at) > idempotency.createdAt) {
    if (stored.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
    return { kind: 'replay', body: JSON.parse(String(stored.response)) };
  }
  return { kind: 'claimed' };
}

export function storeIdempotentResponse(
  sql: Sql,
  idempotency: Idempotency,
  status: number,
  body: unknown,
): void {
  sql(
    `INSERT INTO idempotency (project_id, key_id, idempotency_key, fingerprint, status, response, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint,
       status = excluded.status, response = excluded.response, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  ).run(
    idempotency.projectId,
    idempotency.keyId,
    idempotency.key,
    idempotency.fingerprint,
    status,
    JSON.stringify(body),
    idempotency.createdAt,
    idempotency.expiresAt,
  );
}

export function pruneIdempotencyIn(sql: Sql, nowIso: string): number {
  return sql('DELETE FROM idempotency WHERE expires_at <= ?').run(nowIso).changes;
}
