/**
 * Batches on SQLite: the record is one JSON document beside the columns the sweeper and the
 * Project check read. Creation (batch + job + idempotency record) is one immediate transaction;
 * updates read, check the expected status and write inside one transaction (single writer).
 */
import type Database from 'better-sqlite3';
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
import { appendEventsIn } from './events.js';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency.js';
import { insertJob } from './jobs.js';
import type { SqliteTransaction } from './transaction.js';

const parse = (row: Row | undefined): BatchRecord | undefined =>
  row ? (JSON.parse(String(row.record)) as BatchRecord) : undefined;

/** Replay or conflict for a live stored key, inside the caller's transaction (idempotency.ts). */
function storedIdempotent(db: Database.Database, idempotency: Idempotency): IdempotentResult | undefined {
  const claim = claimIdempotencyKey((text) => db.prepare(text), idempotency);
  return claim.kind === 'replay' ? { status: 200, replayed: true, body: claim.body } : undefined;
}

export class SqliteBatches implements BatchesRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly tx: SqliteTransaction,
  ) {}

  async findIdempotent(idempotency: Idempotency): Promise<IdempotentResult | undefined> {
    return storedIdempotent(this.db, idempotency);
  }

  async create(
    batch: BatchRecord,
    jobRunAfter: number,
    idempotency: Idempotency | null,
    render: Render<BatchRecord>,
  ): Promise<IdempotentResult> {
    return this.tx(() => {
      const replay = idempotency ? storedIdempotent(this.db, idempotency) : undefined;
      if (replay) return replay;
      this.db
        .prepare(
          'INSERT INTO batches (id, project_id, status, delete_after, created_at, record) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(
          batch.id,
          batch.projectId,
          batch.status,
          batch.deleteAfter,
          batch.createdAt,
          JSON.stringify(batch),
        );
      insertJob(this.db, { kind: 'batch', resourceId: batch.id, runAfter: jobRunAfter });
      const body = render(batch);
      // Files and batches answer 200 on creation (vendorb wire); replays answer 200 too.
      if (idempotency) storeIdempotentResponse((text) => this.db.prepare(text), idempotency, 200, body);
      return { status: 200 as const, replayed: false, body };
    });
  }

  async get(projectId: string, id: string): Promise<BatchRecord | undefined> {
    return this.tx(() =>
      parse(
        this.db.prepare('SELECT record FROM batches WHERE id = ? AND project_id = ?').get(id, projectId) as
          | Row
          | undefined,
      ),
    );
  }

  async list(projectId: string, query: BatchListQuery): Promise<BatchRecord[]> {
    const page = batchListSql(projectId, query, () => '?');
    const rows = this.tx(() => this.db.prepare(page.sql).all(...page.params) as Row[]);
    return rows.map((row) => parse(row)!);
  }

  async getById(id: string): Promise<BatchRecord | undefined> {
    return this.tx(() =>
      parse(this.db.prepare('SELECT record FROM batches WHERE id = ?').get(id) as Row | undefined),
    );
  }

  async update(
    id: string,
    fromStatuses: readonly BatchStatus[],
    patch: BatchPatch,
  ): Promise<BatchRecord | undefined> {
    return this.tx(() => {
      const current = parse(
        this.db.prepare('SELECT record FROM batches WHERE id = ?').get(id) as Row | undefined,
      );
      if (!current || !fromStatuses.includes(current.status)) return undefined;
      const next: BatchRecord = { ...current, ...patch };
      this.db
        .prepare('UPDATE batches SET status = ?, record = ? WHERE id = ?')
        .run(next.status, JSON.stringify(next), id);
      const finished = batchFinishedEvent(current.status, next, Date.now());
      if (finished) appendEventsIn((text) => this.db.prepare(text), [finished]);
      return next;
    });
  }

  async listExpired(now: number, limit: number): Promise<BatchRecord[]> {
    const rows = this.tx(
      () =>
        this.db
          .prepare('SELECT record FROM batches WHERE delete_after <= ? ORDER BY delete_after LIMIT ?')
          .all(now, limit) as Row[],
    );
    return rows.map((row) => parse(row)!);
  }

  async delete(id: string): Promise<void> {
    this.tx(() => {
      this.db.prepare('DELETE FROM batches WHERE id = ?').run(id);
      this.db.prepare('DELETE FROM jobs WHERE id = ?').run(`batch:${id}`);
    });
  }
}
