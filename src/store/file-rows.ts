/** Row -> FileRecord, shared by both adapters (same column names; PostgreSQL returns Date and BIGINT text). */
import type { FileRecord, FileStatus } from './files-port.js';
import type { Row } from './rows.js';

function text(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

export function fileFromRow(row: Row): FileRecord {
  return {
    id: text(row.id),
    projectId: text(row.project_id),
    keyId: optionalText(row.key_id),
    connection: text(row.connection),
    filename: text(row.filename),
    purpose: text(row.purpose),
    bytes: Number(row.bytes),
    sha256: text(row.sha256),
    status: text(row.status) as FileStatus,
    statusDetails: optionalText(row.status_details),
    upstreamFileId: optionalText(row.upstream_file_id),
    createdAt: text(row.created_at),
    expiresAt: text(row.expires_at),
  };
}

/** Column order used by both adapters' INSERTs. */
export const FILE_COLUMNS =
  'id, project_id, key_id, connection, filename, purpose, bytes, sha256, status, status_details, upstream_file_id, created_at, expires_at';

export function fileValues(record: FileRecord): unknown[] {
  return [
    record.id,
    record.projectId,
    record.keyId,
    record.connection,
    record.filename,
    record.purpose,
    record.bytes,
    record.sha256,
    record.status,
    record.statusDetails,
    record.upstreamFileId,
    record.createdAt,
    record.expiresAt,
  ];
}
