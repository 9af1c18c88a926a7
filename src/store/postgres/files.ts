/**
 * PostgreSQL files repository (Store.files). Runs in the store's transactions. The idempotent
 * create claims the key the same way governance writes do (idempotency.ts): an in-flight duplicate
 * waits on the key's unique index entry, bounded by lock_timeout (then 409), and the record and
 * its stored response commit together.
 */
import type pg from 'pg';
import { FILE_COLUMNS, fileFromRow, fileValues } from '../file-rows.js';
import type {
  FileListQuery,
  FileRecord,
  FileStatus,
  FilesRepository,
  IdempotencyLookup,
} from '../files-port.js';
import type { Idempotency, IdempotentResult, Render } from '../port.js';
import { fileListSql } from '../resource-lists.js';
import type { Row } from '../rows.js';
import { idempotencyConflict } from '../rules.js';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency.js';

export type PostgresTransaction = <T>(
  work: (client: pg.PoolClient) => Promise<T>,
  begin?: string,
) => Promise<T>;

const READ_COMMITTED = 'BEGIN ISOLATION LEVEL READ COMMITTED';
const INSERT = `INSERT INTO files (${FILE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

export class PostgresFilesRepository implements FilesRepository {
  constructor(
    private readonly transaction: PostgresTransaction,
    private readonly lockTimeoutMs: number,
  ) {}

  async lookupIdempotency(idempotency: Idempotency): Promise<IdempotencyLookup> {
    return this.transaction(async (client) => {
      const result = await client.query<Row>(
        `SELECT fingerprint, status, response FROM idempotency
         WHERE project_id = $1 AND key_id = $2 AND idempotency_key = $3 AND expires_at > $4`,
        [idempotency.projectId, idempotency.keyId, idempotency.key, idempotency.createdAt],
      );
      const row = result.rows[0];
      // status 0 is another transaction's uncommitted claim: invisible here, so it reads as none.
      if (!row || Number(row.status) === 0) return { kind: 'none' } as const;
      if (row.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
      return { kind: 'replay', body: JSON.parse(String(row.response)) } as const;
    });
  }

  async create(
    record: FileRecord,
    idempotency: Idempotency,
    render: Render<FileRecord>,
  ): Promise<IdempotentResult> {
    const begin = `${READ_COMMITTED}; SET LOCAL lock_timeout = '${this.lockTimeoutMs}ms'`;
    return this.transaction(async (client) => {
      const claim = await claimIdempotencyKey(client, idempotency);
      if (claim.kind === 'replay') return { status: 200, replayed: true, body: claim.body };
      await client.query(INSERT, fileValues(record));
      const body = render(record);
      await storeIdempotentResponse(client, idempotency, 200, body);
      return { status: 200, replayed: false, body };
    }, begin);
  }

  async insert(record: FileRecord): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(INSERT, fileValues(record));
    });
  }

  async get(projectId: string, id: string): Promise<FileRecord | undefined> {
    return this.transaction(async (client) => {
      const row = (
        await client.query<Row>('SELECT * FROM files WHERE id = $1 AND project_id = $2', [id, projectId])
      ).rows[0];
      return row ? fileFromRow(row) : undefined;
    });
  }

  async setStatus(
    projectId: string,
    id: string,
    status: FileStatus,
    statusDetails: string | null,
  ): Promise<boolean> {
    return this.transaction(async (client) => {
      const result = await client.query(
        'UPDATE files SET status = $1, status_details = $2 WHERE id = $3 AND project_id = $4',
        [status, statusDetails, id, projectId],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  async remove(projectId: string, id: string): Promise<boolean> {
    return this.transaction(async (client) => {
      const result = await client.query('DELETE FROM files WHERE id = $1 AND project_id = $2', [
        id,
        projectId,
      ]);
      return (result.rowCount ?? 0) > 0;
    });
  }

  async list(projectId: string, query: FileListQuery): Promise<FileRecord[]> {
    const page = fileListSql(projectId, query, (position) => `$${position}`);
    return this.transaction(async (client) =>
      (await client.query<Row>(page.sql, page.params)).rows.map(fileFromRow),
    );
  }

  async listExpired(nowIso: string, limit: number): Promise<FileRecord[]> {
    return this.transaction(async (client) => {
      const result = await client.query<Row>(
        'SELECT * FROM files WHERE expires_at <= $1 ORDER BY expires_at, id LIMIT $2',
        [nowIso, limit],
      );
      return result.rows.map(fileFromRow);
    });
  }
}
