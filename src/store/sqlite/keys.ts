/**
 * SQLite keys repository (Store.keys). Runs on the store's connection inside its serial
 * transactions; idempotent writes go through the store's own idempotency runner, so a key, its
 * revocation and the stored response commit together.
 */
import type Database from 'better-sqlite3';
import { GatewayError } from '../../errors/gateway-error.js';
import type { KeysRepository, NewManagedKey, RevokeKeyInput } from '../keys-port.js';
import type { Idempotency, IdempotentResult, KeyRecord, Render } from '../port.js';
import { keyFromRow, MANAGED_KEY_COLUMNS, managedKeyValues, type Row } from '../rows.js';

type Write<T> = { record: T; status: 200 | 201 };
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
      return { record: { ...key, revokedAt: input.revokedAt }, status: 201 };
    });
  }
}
