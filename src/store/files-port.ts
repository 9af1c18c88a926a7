/**
 * The files sub-port of the store (Store.files): metadata of uploaded and generated files. The
 * content itself is in the object store (objects/), keyed by the file id. Every operation is one
 * transaction; every read and write is scoped to a Project, so another Project's id behaves
 * exactly like an unknown one.
 */
import type { Idempotency, IdempotentResult, Render } from './records.js';

export type FileStatus = 'processed' | 'error';

export interface FileRecord {
  id: string;
  projectId: string;
  /** Gateway Key that uploaded it (null for files the gateway generated, e.g. batch output). */
  keyId: string | null;
  /** Connection the file belongs to (Svc-Route at upload). */
  connection: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  status: FileStatus;
  statusDetails: string | null;
  /** The upstream's id of its copy (chat-completions connections), null when only stored here. */
  upstreamFileId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** What an idempotency key already holds, looked up before any expensive work. */
export type IdempotencyLookup = { kind: 'none' } | { kind: 'replay'; body: unknown };

/** A page of a Project's files, in (created_at, id) order; expired records are not listed. */
export interface FileListQuery {
  /** Rows to return (the caller asks one more than it shows to learn has_more). */
  limit: number;
  order: 'asc' | 'desc';
  purpose?: string | undefined;
  /** Keyset cursor: only rows strictly after this one in the order. */
  after?: { createdAt: string; id: string } | undefined;
  nowIso: string;
}

export interface FilesRepository {
  /** Throws GatewayError idempotency_conflict when the key holds a different request. */
  lookupIdempotency(idempotency: Idempotency): Promise<IdempotencyLookup>;
  /** Inserts the record and stores its rendered response under the key, in one transaction. */
  create(record: FileRecord, idempotency: Idempotency, render: Render<FileRecord>): Promise<IdempotentResult>;
  /** Inserts a record without an idempotency key: one the gateway generated, or an upload sent without one. */
  insert(record: FileRecord): Promise<void>;
  get(projectId: string, id: string): Promise<FileRecord | undefined>;
  /** Sets status and status_details; false when the record is gone. */
  setStatus(
    projectId: string,
    id: string,
    status: FileStatus,
    statusDetails: string | null,
  ): Promise<boolean>;
  /** Removes the record; false when there was none. */
  remove(projectId: string, id: string): Promise<boolean>;
  list(projectId: string, query: FileListQuery): Promise<FileRecord[]>;
  /** Records whose expires_at <= now, oldest first. */
  listExpired(nowIso: string, limit: number): Promise<FileRecord[]>;
}
