/**
 * Files (POST/GET/DELETE /v1/files, GET /v1/files/{id}/content). The flow of an upload:
 *   1. resolve the connection (Svc-Route or the files default) before reading the body;
 *   2. stream the file part into the private object store under the new file id (atomic; the size
 *      limit stops the stream and keeps nothing); read and check the other fields;
 *   3. idempotency (the Idempotency-Key is optional; without it, no replay protection): a key that
 *      already holds this request replays its stored record (the new copy is discarded), a key
 *      holding another request is 409 - both before any upstream call;
 *   4. chat-completions connection: upload the stored bytes upstream (streamed); vendora-wire
 *      connection: store only (its batches carry requests inline);
 *   5. commit the record and its response under the key in one transaction. A concurrent twin
 *      that committed first wins: this request answers its record and removes its own copies.
 * Every failure after step 2 removes what this request stored. Deletion goes upstream copy first,
 * then content, then record: an upstream failure leaves the record (status `error`, details say
 * why) and content in place, so DELETE can be retried. Expired records (30 days) are treated as
 * gone and removed by the sweep the same way.
 */
import type { Readable } from 'node:stream';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, Upstreams } from '../../gateway/connections.js';
import { type FormPart, fileTooLarge, repeatedField, unknownField } from '../../gateway/form-parts.js';
import { resolveConnection } from '../../gateway/resource-route.js';
import { idempotencyFor } from '../../governance/idempotency.js';
import type { Caller } from '../../governance/service.js';
import type { Clock } from '../../lib/clock.js';
import { unixSeconds } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { type ObjectStore, ObjectTooLargeError } from '../../objects/port.js';
import type { ObjectOwner } from '../../objects/sweep.js';
import { mapChatError } from '../../primitives/chat-completions/error.js';
import {
  filePath,
  RESOURCE_PATHS,
  uploadedFileId,
} from '../../primitives/chat-completions/resource-paths.js';
import { multipartBody } from '../../primitives/shared/multipart-body.js';
import {
  readJsonBody,
  type UpstreamFailure,
  type UpstreamResponse,
} from '../../primitives/shared/upstream-call.js';
import { callUpstreamRaw } from '../../primitives/shared/upstream-raw.js';
import type { FileRecord } from '../../store/files-port.js';
import type { Store } from '../../store/port.js';
import { listPage, pageRequest, queryText, unknownCursor } from '../list-page.js';

export const FILE_TTL_SECONDS = 30 * 86_400;
const MIN_TTL_SECONDS = 3600;
export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;

export interface FileUpload {
  caller: Caller;
  /** Absent: no replay protection (stock SDKs send none). */
  idempotencyKey: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  parts: AsyncIterable<FormPart>;
}

export interface FilesDeps {
  config: Config;
  store: Store;
  objects: ObjectStore;
  upstreams: Upstreams;
  clock: Clock;
}

interface UploadFields {
  purpose?: string;
  anchor?: string;
  seconds?: string;
  file?: { filename: string; contentType: string; bytes: number; sha256: string };
}

/** The vendorb FileObject (times in unix seconds). */
export function fileBody(file: FileRecord) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: unixSeconds(Date.parse(file.createdAt)),
    expires_at: unixSeconds(Date.parse(file.expiresAt)),
    filename: file.filename,
    purpose: file.purpose,
    status: file.status,
    status_details: file.statusDetails,
  };
}

function notFound(id: string): GatewayError {
  return new GatewayError('resource_not_found', `No file with id ${JSON.stringify(id)}.`, {
    param: 'file_id',
  });
}

function upstreamFailure(error: unknown, what: string): GatewayError {
  const failure = error as UpstreamFailure;
  return new GatewayError(
    failure.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable',
    `${what}: ${failure.message}`,
  );
}

async function upstreamError(
  response: UpstreamResponse,
  connection: Connection,
  what: string,
): Promise<GatewayError> {
  const body = await readJsonBody(response.body, connection.name).catch(() => undefined);
  const info = mapChatError(response.status, body, response.headers);
  return new GatewayError('upstream_error', `${what}: ${info.message}`, {
    status: info.status,
    type: info.type,
    ...(info.retryAfter ? { retryAfter: info.retryAfter } : {}),
  });
}

export class FilesService {
  constructor(private readonly deps: FilesDeps) {}

  async upload(upload: FileUpload): Promise<{ status: 200; replayed: boolean; body: unknown }> {
    const connection = resolveConnection(
      this.deps.upstreams,
      this.deps.config.endpoints.default_connections,
      upload.headers,
      'files',
    );
    const projectId = upload.caller.projectId;
    const id = newId('file');
    let stored = false;
    try {
      const fields = await this.readForm(projectId, id, upload.parts, () => {
        stored = true;
      });
      const checked = checkFields(fields);
      const nowMs = this.deps.clock.now();
      const idempotency =
        upload.idempotencyKey === undefined
          ? null
          : idempotencyFor({
              projectId,
              keyId: upload.caller.keyId,
              key: upload.idempotencyKey,
              method: 'POST',
              path: '/v1/files',
              body: {
                connection: connection.name,
                purpose: checked.purpose,
                ttl: checked.ttlSeconds,
                ...checked.file,
              },
              nowMs,
              retentionMs: this.deps.config.idempotency.retention_hours * 3_600_000,
            });
      const earlier = idempotency ? await this.deps.store.files.lookupIdempotency(idempotency) : undefined;
      if (earlier?.kind === 'replay') return { status: 200, replayed: true, body: earlier.body };
      const upstreamFileId =
        connection.row.primitive === 'chat-completions'
          ? await this.uploadUpstream(connection, projectId, id, checked)
          : null;
      const record: FileRecord = {
        id,
        projectId,
        keyId: upload.caller.keyId,
        connection: connection.name,
        filename: checked.file.filename,
        purpose: checked.purpose,
        bytes: checked.file.bytes,
        sha256: checked.file.sha256,
        status: 'processed',
        statusDetails: null,
        upstreamFileId,
        createdAt: new Date(nowMs).toISOString(),
        expiresAt: new Date(nowMs + checked.ttlSeconds * 1000).toISOString(),
      };
      let result: Awaited<ReturnType<Store['files']['create']>>;
      try {
        result = idempotency
          ? await this.deps.store.files.create(record, idempotency, fileBody)
          : await this.deps.store.files.insert(record).then(() => ({
              status: 200 as const,
              replayed: false,
              body: fileBody(record),
            }));
      } catch (error) {
        if (upstreamFileId !== null)
          await this.deleteUpstream(connection, upstreamFileId).catch(() => undefined);
        throw error;
      }
      if (result.replayed && upstreamFileId !== null)
        await this.deleteUpstream(connection, upstreamFileId).catch(() => undefined);
      if (!result.replayed) stored = false;
      return { status: 200, replayed: result.replayed, body: result.body };
    } finally {
      if (stored) await this.deps.objects.delete(projectId, id).catch(() => undefined);
    }
  }

  /** Reads every part; the file goes straight into the object store under `id`. */
  private async readForm(
    projectId: string,
    id: string,
    parts: AsyncIterable<FormPart>,
    onStored: () => void,
  ): Promise<UploadFields> {
    const fields: UploadFields = {};
    const maxBytes = this.deps.config.objects.max_upload_bytes;
    for await (const part of parts) {
      if (part.kind === 'file') {
        if (part.name !== 'file') throw unknownField(part.name);
        if (fields.file) throw repeatedField('file');
        if (part.filename === '')
          throw new GatewayError('invalid_request', 'file: a filename is required', { param: 'file' });
        onStored();
        try {
          const put = await this.deps.objects.put(projectId, id, part.content, { sealed: false, maxBytes });
          fields.file = {
            filename: part.filename,
            contentType: part.contentType,
            bytes: put.bytes,
            sha256: put.sha256,
          };
        } catch (error) {
          if (error instanceof ObjectTooLargeError) throw fileTooLarge(maxBytes);
          throw error;
        }
        continue;
      }
      const slot = FIELD_SLOTS[part.name];
      if (slot === undefined) throw unknownField(part.name);
      if (fields[slot] !== undefined) throw repeatedField(part.name);
      fields[slot] = part.value;
    }
    return fields;
  }

  private async uploadUpstream(
    connection: Connection,
    projectId: string,
    id: string,
    checked: CheckedFields,
  ): Promise<string> {
    const content = await this.deps.objects.get(projectId, id);
    if (!content) throw new Error(`object ${id} vanished during its upload`);
    const form = multipartBody([['purpose', checked.purpose]], {
      field: 'file',
      filename: checked.file.filename,
      contentType: checked.file.contentType,
      bytes: checked.file.bytes,
      content,
    });
    let response: UpstreamResponse;
    try {
      response = await callUpstreamRaw(connection, {
        method: 'POST',
        path: RESOURCE_PATHS.files,
        headers: { 'content-type': form.contentType, 'content-length': String(form.contentLength) },
        body: form.body,
      });
    } catch (error) {
      content.destroy();
      throw upstreamFailure(error, `uploading the file to ${connection.name}`);
    }
    if (response.status !== 200)
      throw await upstreamError(response, connection, `uploading the file to ${connection.name}`);
    const upstreamId = uploadedFileId(await readJsonBody(response.body, connection.name));
    if (upstreamId === undefined)
      throw new GatewayError('upstream_error', `${connection.name} answered the upload without a file id.`);
    return upstreamId;
  }

  /** A live (unexpired) record of the caller's Project; anything else is the same 404. */
  private async live(caller: Caller, id: string): Promise<FileRecord> {
    const record = await this.deps.store.files.get(caller.projectId, id);
    if (!record || Date.parse(record.expiresAt) <= this.deps.clock.now()) throw notFound(id);
    return record;
  }

  async get(caller: Caller, id: string): Promise<unknown> {
    return fileBody(await this.live(caller, id));
  }

  /**
   * GET /v1/files: the Project's live files, newest first unless `order=asc`, optionally of one
   * `purpose`; `limit` 1-10,000 (default 10,000, as the vendor), `after` a file id of this Project.
   */
  async list(caller: Caller, query: Record<string, unknown>): Promise<unknown> {
    const page = pageRequest(query, { defaultLimit: 10_000, maxLimit: 10_000 });
    const order = queryText(query, 'order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc')
      throw new GatewayError('invalid_request', 'order: must be asc or desc', { param: 'order' });
    const purpose = queryText(query, 'purpose');
    let after: FileRecord | undefined;
    if (page.after !== undefined) {
      after = await this.deps.store.files.get(caller.projectId, page.after);
      if (!after) throw unknownCursor(page.after);
    }
    const rows = await this.deps.store.files.list(caller.projectId, {
      limit: page.limit + 1,
      order,
      purpose,
      after,
      nowIso: new Date(this.deps.clock.now()).toISOString(),
    });
    return listPage(rows, page.limit, fileBody);
  }

  async content(caller: Caller, id: string): Promise<{ bytes: number; stream: Readable }> {
    const record = await this.live(caller, id);
    const stream = await this.deps.objects.get(caller.projectId, record.id);
    if (!stream) throw notFound(id);
    return { bytes: record.bytes, stream };
  }

  async delete(caller: Caller, id: string): Promise<unknown> {
    const record = await this.live(caller, id);
    await this.removeEverywhere(record);
    return { id: record.id, object: 'file' as const, deleted: true as const };
  }

  /** Upstream copy, then content, then record; an upstream failure marks the record and throws. */
  private async removeEverywhere(record: FileRecord): Promise<void> {
    if (record.upstreamFileId !== null) {
      const connection = this.deps.upstreams.connections.get(record.connection);
      try {
        if (!connection)
          throw new GatewayError(
            'upstream_unavailable',
            `connection ${record.connection} is no longer configured`,
          );
        await this.deleteUpstream(connection, record.upstreamFileId);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        await this.deps.store.files.setStatus(
          record.projectId,
          record.id,
          'error',
          `Deletion incomplete: the upstream copy on ${record.connection} could not be deleted (${reason}). ` +
            'The content and this record are kept; DELETE the file again to retry.',
        );
        throw error instanceof GatewayError ? error : new GatewayError('upstream_error', reason);
      }
    }
    await this.deps.objects.delete(record.projectId, record.id);
    await this.deps.store.files.remove(record.projectId, record.id);
  }

  /** DELETE {base}/files/{upstream id}; 404 counts as already deleted. */
  private async deleteUpstream(connection: Connection, upstreamFileId: string): Promise<void> {
    let response: UpstreamResponse;
    try {
      response = await callUpstreamRaw(connection, { method: 'DELETE', path: filePath(upstreamFileId) });
    } catch (error) {
      throw upstreamFailure(error, `deleting the upstream copy on ${connection.name}`);
    }
    if (response.status === 200 || response.status === 404) {
      await response.body.dump();
      return;
    }
    throw await upstreamError(response, connection, `deleting the upstream copy on ${connection.name}`);
  }

  /** The files owner for the object sweep. */
  sweepOwner(): ObjectOwner {
    return {
      prefix: 'file_',
      referenced: async (projectId, key) => (await this.deps.store.files.get(projectId, key)) !== undefined,
      expire: (nowMs) => this.expire(nowMs),
    };
  }

  /** Removes records past their TTL (upstream copy, content, record); returns how many went. */
  async expire(nowMs: number): Promise<number> {
    const expired = await this.deps.store.files.listExpired(new Date(nowMs).toISOString(), 100);
    let removed = 0;
    for (const record of expired) {
      try {
        await this.removeEverywhere(record);
        removed += 1;
      } catch {
        // kept with status error; the next sweep retries
      }
    }
    return removed;
  }
}

const FIELD_SLOTS: Readonly<Record<string, 'purpose' | 'anchor' | 'seconds'>> = {
  purpose: 'purpose',
  'expires_after[anchor]': 'anchor',
  'expires_after[seconds]': 'seconds',
};

interface CheckedFields {
  purpose: string;
  ttlSeconds: number;
  file: NonNullable<UploadFields['file']>;
}

function checkFields(fields: UploadFields): CheckedFields {
  if (!fields.file) throw new GatewayError('invalid_request', 'file: required', { param: 'file' });
  if (fields.purpose === undefined)
    throw new GatewayError('invalid_request', 'purpose: required', { param: 'purpose' });
  if (!(FILE_PURPOSES as readonly string[]).includes(fields.purpose)) {
    throw new GatewayError('invalid_request', `purpose: must be one of ${FILE_PURPOSES.join(', ')}`, {
      param: 'purpose',
    });
  }
  let ttlSeconds = FILE_TTL_SECONDS;
  if (fields.anchor !== undefined || fields.seconds !== undefined) {
    if (fields.anchor !== 'created_at') {
      throw new GatewayError('invalid_request', 'expires_after[anchor]: must be created_at', {
        param: 'expires_after[anchor]',
      });
    }
    const seconds = Number(fields.seconds);
    if (!/^\d+$/.test(fields.seconds ?? '') || seconds < MIN_TTL_SECONDS || seconds > FILE_TTL_SECONDS) {
      throw new GatewayError(
        'invalid_request',
        `expires_after[seconds]: must be an integer from ${MIN_TTL_SECONDS} to ${FILE_TTL_SECONDS} (the 30-day file TTL)`,
        { param: 'expires_after[seconds]' },
      );
    }
    ttlSeconds = seconds;
  }
  return { purpose: fields.purpose, ttlSeconds, file: fields.file };
}
