/**
 * PostgreSQL keys repository (Store.keys). Idempotent writes run in the store's idempotency runner
 * (idempotency.ts: an in-flight duplicate waits on the key's unique index entry). A revocation is
 * one conditional UPDATE (`revoked_at IS NULL`), so two replicas revoking at once agree on who
 * revoked it (201) and who found it revoked (200).
 */
import type pg from 'pg';
import { GatewayError } from '../../errors/gateway-error.js';
import { keyRevokedEvent } from '../event-builders.js';
import type { KeysRepository, NewManagedKey, RevokeKeyInput } from '../keys-port.js';
import type { Idempotency, IdempotentResult, KeyRecord, Render } from '../port.js';
import { keyFromRow, MANAGED_KEY_COLUMNS, managedKeyValues, type Row } from '../rows.js';
import { appendEventsIn } from './events.js';

type Client = pg.PoolClient;
type Write<T> = { record: T; status: 200 | 201 };
export type PostgresIdempotent = <T>(
  idempotency: Idempotency,
  render: Render<T>,
  write: (client: Client) => Promise<Write<T>>,
) => Promise<IdempotentResult>;

async function keyRow(client: Client, projectId: string, id: string): Promise<KeyRecord | undefined> {
  const row = (
    await client.query<Row>('SELECT * FROM gateway_keys WHERE id = $1 AND project_id = $2', [id, projectId])
  ).rows[0];
  return row ? keyFromRow(row) : undefined;
}

export class PostgresKeys implements KeysRepository {
  constructor(
    private readonly transaction: <T>(work: (client: Client) => Promise<T>) => Promise<T>,
    private readonly idempotent: PostgresIdempotent,
  ) {}

  private run<T>(
    idempotency: Idempotency | null,
    render: Render<T>,
    write: (client: Client) => Promise<Write<T>>,
  ): Promise<IdempotentResult> {
    if (idempotency) return this.idempotent(idempotency, render, write);
    return this.transaction(async (client) => {
      const { record, status } = await write(client);
      return { status, replayed: false, body: render(record) };
    });
  }

  async create(
    key: NewManagedKey,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      const inserted = await client.query<Row>(
        `INSERT INTO gateway_keys (${MANAGED_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        managedKeyValues(key),
      );
      return { record: keyFromRow(inserted.rows[0]!), status: 201 };
    });
  }

  async get(projectId: string, id: string): Promise<KeyRecord | undefined> {
    return this.transaction((client) => keyRow(client, projectId, id));
  }

  async revoke(
    input: RevokeKeyInput,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      const revoked = await client.query<Row>(
        'UPDATE gateway_keys SET revoked_at = $1 WHERE id = $2 AND project_id = $3 AND revoked_at IS NULL RETURNING *',
        [input.revokedAt, input.id, input.projectId],
      );
      if (revoked.rows[0]) {
        const key = keyFromRow(revoked.rows[0]);
        await appendEventsIn(client, [keyRevokedEvent(key, input.revokedAt)]);
        return { record: key, status: 201 };
      }
      const key = await keyRow(client, input.projectId, input.id);
      if (!key) throw new GatewayError('key_not_found', 'Gateway Key not found.');
      return { record: key, status: 200 };
    });
  }
}
