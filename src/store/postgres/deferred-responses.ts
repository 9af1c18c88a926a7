/**
 * Deferred responses on PostgreSQL: the record is one JSON document beside the columns the reaper
 * and the Project check read. Every state change locks the row (SELECT ... FOR UPDATE), checks the
 * expected status and writes, so a cancel racing the job (on any replica) has exactly one winner.
 */
import {
  type DeferredPatch,
  type DeferredResponseRecord,
  type DeferredResponsesRepository,
  type DeferredStatus,
  FINISHED_STATUSES,
} from '../deferred-responses-port.js';
import { responseFinishedEvent } from '../event-builders.js';
import type { Row } from '../rows.js';
import { appendEventsIn } from './events.js';
import { insertJobIn } from './jobs.js';
import type { PgTransaction } from './transaction.js';

const parse = (row: Row | undefined): DeferredResponseRecord | undefined =>
  row ? (JSON.parse(String(row.record)) as DeferredResponseRecord) : undefined;

export class PostgresDeferredResponses implements DeferredResponsesRepository {
  constructor(private readonly transaction: PgTransaction) {}

  async create(record: DeferredResponseRecord, jobRunAfter: number): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(
        'INSERT INTO deferred_responses (id, project_id, status, reap_at, record) VALUES ($1, $2, $3, $4, $5)',
        [record.id, record.projectId, record.status, record.reapAt, JSON.stringify(record)],
      );
      await insertJobIn(client, { kind: 'response', resourceId: record.id, runAfter: jobRunAfter });
    });
  }

  async get(projectId: string, id: string): Promise<DeferredResponseRecord | undefined> {
    return this.transaction(async (client) =>
      parse(
        (
          await client.query<Row>('SELECT record FROM deferred_responses WHERE id = $1 AND project_id = $2', [
            id,
            projectId,
          ])
        ).rows[0],
      ),
    );
  }

  async getById(id: string): Promise<DeferredResponseRecord | undefined> {
    return this.transaction(async (client) =>
      parse((await client.query<Row>('SELECT record FROM deferred_responses WHERE id = $1', [id])).rows[0]),
    );
  }

  async update(
    id: string,
    fromStatuses: readonly DeferredStatus[],
    patch: DeferredPatch,
  ): Promise<DeferredResponseRecord | undefined> {
    return this.transaction(async (client) => {
      const current = parse(
        (await client.query<Row>('SELECT record FROM deferred_responses WHERE id = $1 FOR UPDATE', [id]))
          .rows[0],
      );
      if (!current || !fromStatuses.includes(current.status)) return undefined;
      const next: DeferredResponseRecord = { ...current, ...patch };
      await client.query(
        'UPDATE deferred_responses SET status = $1, reap_at = $2, record = $3 WHERE id = $4',
        [next.status, next.reapAt, JSON.stringify(next), id],
      );
      const finished = responseFinishedEvent(current.status, next, Date.now());
      if (finished) await appendEventsIn(client, [finished]);
      return next;
    });
  }

  async deleteFinished(projectId: string, id: string): Promise<DeferredResponseRecord | undefined> {
    return this.transaction(async (client) => {
      const current = parse(
        (
          await client.query<Row>(
            'SELECT record FROM deferred_responses WHERE id = $1 AND project_id = $2 FOR UPDATE',
            [id, projectId],
          )
        ).rows[0],
      );
      if (!current || !FINISHED_STATUSES.includes(current.status)) return undefined;
      await client.query('DELETE FROM deferred_responses WHERE id = $1', [id]);
      await client.query('DELETE FROM jobs WHERE id = $1', [`response:${id}`]);
      return current;
    });
  }

  async listDue(now: number, limit: number): Promise<DeferredResponseRecord[]> {
    return this.transaction(async (client) => {
      const rows = (
        await client.query<Row>(
          'SELECT record FROM deferred_responses WHERE reap_at <= $1 ORDER BY reap_at LIMIT $2',
          [now, limit],
        )
      ).rows;
      return rows.map((row) => parse(row)!);
    });
  }

  async delete(id: string): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('DELETE FROM deferred_responses WHERE id = $1', [id]);
      await client.query('DELETE FROM jobs WHERE id = $1', [`response:${id}`]);
    });
  }
}
