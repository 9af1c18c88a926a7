/**
 * Batches on PostgreSQL: the record is one JSON document beside the columns the sweeper and the
 * Project check read. Creation claims the idempotency key (waiting on an in-flight duplicate, see
 * idempotency.ts), then writes batch, job and response in the same transaction. Updates lock the
 * row (SELECT ... FOR UPDATE), check the expected status and write: one winner per transition.
 */
import type pg from 'pg';
import type {
  BatchesRepository,
  BatchListQuery,
  BatchPatch,
  BatchRecord,
  BatchStatus,
} from '../batches-port.js';
import { batchFinishedEvent } from '../event-builders.js';
import type { Idempotency, IdempotentResult, Render } from '../port.js';
import { batchListSql } from '../resource-lists.js';
import type { Row } from '../rows.js';
import { idempotencyConflict } from '../rules.js';
import { appendEventsIn } from './events.js';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency.js';
import { insertJobIn } from './jobs.js';
import type { PgTransaction } from './transaction.js';

const parse = (row: Row | undefined): BatchRecord | undefined =>
  row ? (JSON.parse(String(row.record)) as BatchRecord) : undefined;

export class PostgresBatches implements BatchesRepository {
  constructor(private readonly transaction: PgTransaction) {}

  async findIdempotent(idempotency: Idempotency): Promise<IdempotentResult | undefined> {
    return this.transaction(async (client) => {
      const row = (
        await client.query<Row>(
          `SELECT fingerprint, status, response FROM idempotency
           WHERE project_id = $1 AND key_id = $2 AND idempotency_key = $3 AND expires_at > $4 AND status <> 0`,
          [idempotency.projectId, idempotency.keyId, idempotency.key, idempotency.createdAt],
        )
      ).rows[0];
      if (!row) return undefined;
      if (row.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
      return { status: 200, replayed: true, body: JSON.parse(String(row.response)) };
    });
  }

  async create(
    batch: BatchRecord,
    jobRunAfter: number,
    idempotency: Idempotency | null,
    render: Render<BatchRecord>,
  ): Promise<IdempotentResult> {
    return this.transaction(async (client) => {
      const claim = idempotency ? await claimIdempotencyKey(client, idempotency) : { kind: 'none' as const };
      if (claim.kind === 'replay') return { status: 200 as const, replayed: true, body: claim.body };
      await client.query(
        'INSERT INTO batches (id, project_id, status, delete_after, created_at, record) VALUES ($1, $2, $3, $4, $5, $6)',
        [batch.id, batch.projectId, batch.status, batch.deleteAfter, batch.createdAt, JSON.stringify(batch)],
      );
      await insertJobIn(client, { kind: 'batch', resourceId: batch.id, runAfter: jobRunAfter });
      const body = render(batch);
      if (idempotency) await storeIdempotentResponse(client, idempotency, 200, body);
      return { status: 200 as const, replayed: false, body };
    });
  }

  async get(projectId: string, id: string): Promise<BatchRecord | undefined> {
    return this.transaction(async (client) =>
      parse(
        (
          await client.query<Row>('SELECT record FROM batches WHERE id = $1 AND project_id = $2', [
            id,
            projectId,
          ])
        ).rows[0],
      ),
    );
  }

  async list(projectId: string, query: BatchListQuery): Promise<BatchRecord[]> {
    const page = batchListSql(projectId, query, (position) => `$${position}`);
    return this.transaction(async (client) =>
      (await client.query<Row>(page.sql, page.params)).rows.map((row) => parse(row)!),
    );
  }

  async getById(id: string): Promise<BatchRecord | undefined> {
    return this.transaction(async (client) =>
      parse((await client.query<Row>('SELECT record FROM batches WHERE id = $1', [id])).rows[0]),
    );
  }

  async update(
    id: string,
    fromStatuses: readonly BatchStatus[],
    patch: BatchPatch,
  ): Promise<BatchRecord | undefined> {
    return this.transaction(async (client) => {
      const current = parse(
        (await client.query<Row>('SELECT record FROM batches WHERE id = $1 FOR UPDATE', [id])).rows[0],
      );
      if (!current || !fromStatuses.includes(current.status)) return undefined;
      const next: BatchRecord = { ...current, ...patch };
      await client.query('UPDATE batches SET status = $1, record = $2 WHERE id = $3', [
        next.status,
        JSON.stringify(next),
        id,
      ]);
      const finished = batchFinishedEvent(current.status, next, Date.now());
      if (finished) await appendEventsIn(client, [finished]);
      return next;
    });
  }

  async listExpired(now: number, limit: number): Promise<BatchRecord[]> {
    return this.transaction(async (client) => {
      const rows = (
        await client.query<Row>(
          'SELECT record FROM batches WHERE delete_after <= $1 ORDER BY delete_after LIMIT $2',
          [now, limit],
        )
      ).rows;
      return rows.map((row) => parse(row)!);
    });
  }

  async delete(id: string): Promise<void> {
    await this.transaction(async (client: pg.PoolClient) => {
      await client.query('DELETE FROM batches WHERE id = $1', [id]);
      await client.query('DELETE FROM jobs WHERE id = $1', [`batch:${id}`]);
    });
  }
}
