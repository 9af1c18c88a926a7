/**
 * Gateway Keys on SQLite: the configured and CLI keys of the Store (the functions below, run inside
 * the store's transaction or read) and the keys repository (Store.keys). Both run on the store's
 * connection inside its serial transactions; idempotent writes go through the store's own
 * idempotency runner (idempotency.ts), so a key, its revocation and the stored response commit
 * together.
 */
import type Database from 'better-sqlite3';
import { GatewayError } from '../../errors/gateway-error.js';
import { keyRevokedEvent } from '../event-builders.js';
import type { KeysRepository, NewManagedKey, RevokeKeyInput } from '../keys-port.js';
import type { Idempotency, IdempotentResult, KeyRecord, NewKey, Render } from '../port.js';
import { keyFromRow, MANAGED_KEY_COLUMNS, managedKeyValues, type Row } from '../rows.js';
import { appendEventsIn } from './events.js';
import type { Sql } from './transaction.js';

type Write<T> = { record: T; status: 200 | 201 };

export function createKeyIn(sql: Sql, key: NewKey): void {
  sql(
    'INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt);
}

export function upsertConfiguredKeyIn(sql: Sql, key: NewKey): void {
  sql(
    `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, secret_hash = excluded.secret_hash,
       scopes = excluded.scopes, label = excluded.label`,
  ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt);
}

export function insertKeyIfAbsentIn(sql: Sql, key: NewKey): boolean {
  return (
    sql(
      `INSERT INTO gateway_keys (id, project_id, secret_hash, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ).run(key.id, key.projectId, key.secretHash, JSON.stringify(key.scopes), key.label, key.createdAt)
      .changes === 1
  );
}

export function findKeyByHashIn(sql: Sql, secretHash: string): KeyRecord | undefined {
  const row = sql('SELECT * FROM gateway_keys WHERE secret_hash = ?').get(secretHash);
  return row ? keyFromRow(row as Row) : undefined;
}

export function listKeysIn(sql: Sql, projectId?: string): KeyRecord[] {
  const rows =
    projectId === undefined
      ? sql('SELECT * FROM gateway_keys ORDER BY created_at, id').all()
      : sql('SELECT * FROM gateway_keys WHERE project_id = ? ORDER BY created_at, id').all(projectId);
  return (rows as Row[]).map(keyFromRow);
}

/** Revokes the key (a revoked key keeps its first revocation time); key.revoked when this call revoked it. */
export function revokeKeyIn(sql: Sql, id: string, revokedAt: string): boolean {
  const row = sql('SELECT * FROM gateway_keys WHERE id = ?').get(id) as Row | undefined;
  if (!row) return false;
  const key = keyFromRow(row);
  if (key.revokedAt !== null) return true;
  sql('UPDATE gateway_keys SET revoked_at = ? WHERE id = ?').run(revokedAt, id);
  appendEventsIn(sql, [keyRevokedEvent(key, revokedAt)]);
  return true;
}

export type SqliteIdempotent = <T>(
  idempotency: Idempotency,
  render: Render<T>,
  write: () => Write<T>,
) => IdempotentResult;

export class SqliteKeys implements KeysRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly transaction: <T>(work: () => T) => T,
    private readonly idempotent: SqliteIdempotent,
  ) {}

  private run<T>(
    idempotency: Idempotency | null,
    render: Render<T>,
    write: () => Write<T>,
  ): IdempotentResult {
    if (idempotency) return this.idempotent(idempotency, render, write);
    return this.transaction(() => {
      const { record, status } = write();
      return { status, replayed: false, body: render(record) };
    });
  }

  private row(projectId: string, id: string): KeyRecord | undefined {
    const row = this.db
      .prepare('SELECT * FROM gateway_keys WHERE id = ? AND project_id = ?')
      .get(id, projectId) as Row | undefined;
    return row ? keyFromRow(row) : undefined;
  }

  async create(
    key: NewManagedKey,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      this.db
        .prepare(`INSERT INTO gateway_keys (${MANAGED_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(...managedKeyValues(key));
      return { record: this.row(key.projectId, key.id)!, status: 201 };
    });
  }

  async get(projectId: string, id: string): Promise<KeyRecord | undefined> {
    return this.transaction(() => this.row(projectId, id));
  }

  async revoke(
    input: RevokeKeyInput,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      const key = this.row(input.projectId, input.id);
      if (!key) throw new GatewayError('key_not_found', 'Gateway Key not found.');
      if (key.revokedAt !== null) return { record: key, status: 200 };
      this.db.prepare('UPDATE gateway_keys SET revoked_at = ? WHERE id = ?').run(input.revokedAt, input.id);
      appendEventsIn((text) => this.db.prepare(text), [keyRevokedEvent(key, input.revokedAt)]);
      return { record: { ...key, revokedAt: input.revokedAt }, status: 201 };
    });
  }
}
