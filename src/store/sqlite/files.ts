/**
 * SQLite files repository (Store.files). Runs on the store's connection and inside its
 * transactions (BEGIN IMMEDIATE, serial), so the idempotent create is exact: the key is checked and
 * the record and its response are written in one transaction.
 */
import type Database from 'better-sqlite3';
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

export type SqliteTransaction = <T>(work: () => T) => T;

const INSERT = `INSERT INTO files (${FILE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export class SqliteFilesRepository implements FilesRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly transaction: SqliteTransaction,
  ) {}

  private stored(idempotency: Idempotency): IdempotencyLookup {
    const row = this.db
      .prepare(
        'SELECT fingerprint, response, expires_at FROM idempotency WHERE project_id = ? AND key_id = ? AND idempotency_key = ?',
      )
      .get(idempotency.projectId, idempotency.keyId, idempotency.key) as Row | undefined;
    if (!row || String(row.expires_at) <= idempotency.createdAt) return { kind: 'none' };
    if (row.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
    return { kind: 'replay', body: JSON.parse(String(row.response)) };
  }

  async lookupIdempotency(idempotency: Idempotency): Promise<IdempotencyLookup> {
    return this.transaction(() => this.stored(idempotency));
  }

  async create(
    record: FileRecord,
    idempotency: Idempotency,
    render: Render<FileRecord>,
  ): Promise<IdempotentResult> {
    return this.transaction(() => {
      const earlier = this.stored(idempotency);
      if (earlier.kind === 'replay') return { status: 200, replayed: true, body: earlier.body };
      this.db.prepare(INSERT).run(...fileValues(record));
      const body = render(record);
      this.db
        .prepare(
          `INSERT INTO idempotency (project_id, key_id, idempotency_key, fingerprint, status, response, created_at, expires_at)
           VALUES (?, ?, ?, ?, 200, ?, ?, ?)
           ON CONFLICT (project_id, key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint,
             status = excluded.status, response = excluded.response, created_at = excluded.created_at, expires_at = excluded.expires_at`,
        )
        .run(
          idempotency.projectId,
          idempotency.keyId,
          idempotency.key,
          idempotency.fingerprint,
          JSON.stringify(body),
          idempotency.createdAt,
          idempotency.expiresAt,
        );
      return { status: 200, replayed: false, body };
    });
  }

  async insert(record: FileRecord): Promise<void> {
    this.transaction(() => this.db.prepare(INSERT).run(...fileValues(record)));
  }

  async get(projectId: string, id: string): Promise<FileRecord | undefined> {
    const row = this.transaction(
      () =>
        this.db.prepare('SELECT * FROM files WHERE id = ? AND project_id = ?').get(id, projectId) as
          | Row
          | undefined,
    );
    return row ? fileFromRow(row) : undefined;
  }

  async setStatus(
    projectId: string,
    id: string,
    status: FileStatus,
    statusDetails: string | null,
  ): Promise<boolean> {
    return this.transaction(
      () =>
        this.db
          .prepare('UPDATE files SET status = ?, status_details = ? WHERE id = ? AND project_id = ?')
          .run(status, statusDetails, id, projectId).changes > 0,
    );
  }

  async remove(projectId: string, id: string): Promise<boolean> {
    return this.transaction(
      () =>
        this.db.prepare('DELETE FROM files WHERE id = ? AND project_id = ?').run(id, projectId).changes > 0,
    );
  }

  async list(projectId: string, query: FileListQuery): Promise<FileRecord[]> {
    const page = fileListSql(projectId, query, () => '?');
    const rows = this.transaction(() => this.db.prepare(page.sql).all(...page.params) as Row[]);
    return rows.map(fileFromRow);
  }

  async listExpired(nowIso: string, limit: number): Promise<FileRecord[]> {
    const rows = this.transaction(
      () =>
        this.db
          .prepare('SELECT * FROM files WHERE expires_at <= ? ORDER BY expires_at, id LIMIT ?')
          .all(nowIso, limit) as Row[],
    );
    return rows.map(fileFromRow);
  }
}
