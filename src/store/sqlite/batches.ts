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
import type { Idempotency, IdempotentResult, Render } from '../port.js';
import { batchListSql } from '../resource-lists.js';
import type { Row } from '../rows.js';
import { idempotencyConflict } from '../rules.js';
import { insertJob } from './jobs.js';
import type { SqliteTransaction } from './sqlite-transaction.js';

const parse = (row: Row | undefined): BatchRecord | undefined =>
  row ? (JSON.parse(String(row.record)) as BatchRecord) : undefined;

/** Replay or conflict for a live stored key, inside the caller's transaction. */
export function storedIdempotent(
  db: Database.Database,
  idempotency: Idempotency,
): IdempotentResult | undefined {
  const stored = db
    .prepare(
      'SELECT fingerprint, response, expires_at FROM idempotency WHERE project_id = ? AND key_id = ? AND idempotency_key = ?',
    )
    .get(idempotency.projectId, idempotency.keyId, idempotency.key) as Row | undefined;
  if (!stored || String(stored.expires_at) <= idempotency.createdAt) return undefined;
  if (stored.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
  return { status: 200, replayed: true, body: JSON.parse(String(stored.response)) };
}

export function storeIdempotent(
  db: Database.Database,
  idempotency: Idempotency,
  status: number,
  body: unknown,
): void {
  db.prepare(
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
      if (idempotency) storeIdempotent(this.db, idempotency, 200, body);
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
