/**
 * The default object store: a local folder, `{root}/{projectId}/{key}`.
 *
 * put: stream into `{root}/.tmp/{random}.part` (same file system), fsync it, rename it onto the
 * final path, fsync the folder. A process killed at any point leaves either no object or the
 * complete one; a killed write's part is never at a final path and removeStaleParts() deletes it.
 * Project isolation is by path (ids and keys are checked against a strict pattern, so no `..` or
 * separator can escape the Project's folder) and, for sealed objects, by the authenticated data.
 * A full, read-only or failing disk (ENOSPC, EDQUOT, EROFS, EIO) throws ObjectStoreUnavailableError
 * (503 with Retry-After for every caller), never a raw file-system error.
 */
import type { Dirent } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { ObjectStoreUnavailableError } from '../errors/gateway-error.js';
import { randomBase32 } from '../lib/ids.js';
import { framedBody } from './framed-body.js';
import { illegalName, KEY_PATTERN, PROJECT_PATTERN, sealingRequired, validName } from './object-names.js';
import type { ObjectStore, PutOptions, PutResult, StoredObject } from './port.js';
import { framingOf, HEADER_BYTES, openSealed } from './sealing.js';

const PARTS = '.tmp';

/** File-system errors that say the disk cannot take or give data for now. */
const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** A disk failure as ObjectStoreUnavailableError; any other error unchanged. */
function diskError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === undefined || !DISK_CODES.has(code)) return error;
  return new ObjectStoreUnavailableError(`object store unavailable: ${code} on the objects folder`, {
    cause: error,
  });
}

export interface LocalFolderOptions {
  root: string;
  /** 32-byte AES-256-GCM key; without it sealed puts are refused. */
  sealingKey?: Buffer;
}

async function writeAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    offset += bytesWritten;
  }
}

/** fsync a folder so a rename or a new entry in it survives a crash. */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class LocalFolderObjectStore implements ObjectStore {
  private readonly root: string;
  private readonly sealingKey: Buffer | undefined;

  constructor(options: LocalFolderOptions) {
    this.root = options.root;
    this.sealingKey = options.sealingKey;
  }

  requireSealing(feature: string): void {
    if (!this.sealingKey) throw sealingRequired(feature);
  }

  private pathOf(projectId: string, key: string): string {
    return join(this.root, projectId, key);
  }

  async put(
    projectId: string,
    key: string,
    body: Readable | Buffer,
    options: PutOptions,
  ): Promise<PutResult> {
    if (!validName(projectId, key)) throw illegalName(projectId, key);
    if (options.sealed) this.requireSealing('a sealed object');
    const partsFolder = join(this.root, PARTS);
    const part = join(partsFolder, `${randomBase32(24)}.part`);
    let handle: FileHandle;
    try {
      await mkdir(partsFolder, { recursive: true });
      handle = await open(part, 'wx', 0o600);
    } catch (error) {
      throw diskError(error);
    }
    let handleOpen = true;
    try {
      const framed = framedBody(body, options, { sealingKey: this.sealingKey, projectId, key });
      for await (const chunk of framed.chunks) await writeAll(handle, chunk);
      await handle.sync();
      handleOpen = false;
      await handle.close();
      const finalPath = this.pathOf(projectId, key);
      const created = await mkdir(dirname(finalPath), { recursive: true });
      if (created !== undefined) await syncFolder(this.root);
      await rename(part, finalPath);
      await syncFolder(dirname(finalPath));
      return framed.result();
    } catch (error) {
      if (handleOpen) await handle.close().catch(() => undefined);
      await rm(part, { force: true }).catch(() => undefined);
      throw diskError(error);
    }
  }

  async get(projectId: string, key: string): Promise<Readable | undefined> {
    if (!validName(projectId, key)) return undefined;
    const path = this.pathOf(projectId, key);
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw diskError(error);
    }
    let handedOver = false;
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await handle.read(head, 0, HEADER_BYTES, 0);
      const framing = framingOf(head.subarray(0, bytesRead));
      if (framing === 'plain') {
        handedOver = true;
        return handle.createReadStream({ start: HEADER_BYTES, autoClose: true });
      }
      this.requireSealing('reading a sealed object');
      const stored = await readFile(handle);
      return Readable.from([openSealed(stored, this.sealingKey!, projectId, key)]);
    } catch (error) {
      throw diskError(error);
    } finally {
      if (!handedOver) await handle.close();
    }
  }

  async delete(projectId: string, key: string): Promise<boolean> {
    if (!validName(projectId, key)) return false;
    const path = this.pathOf(projectId, key);
    try {
      await stat(path);
    } catch {
      return false;
    }
    await rm(path, { force: true });
    await syncFolder(dirname(path)).catch(() => undefined);
    return true;
  }

  async *list(): AsyncIterable<StoredObject> {
    for (const project of await this.entries(this.root)) {
      if (!project.isDirectory() || project.name === PARTS || !PROJECT_PATTERN.test(project.name)) continue;
      for (const entry of await this.entries(join(this.root, project.name))) {
        if (!entry.isFile() || !KEY_PATTERN.test(entry.name)) continue;
        try {
          const info = await stat(join(this.root, project.name, entry.name));
          yield {
            projectId: project.name,
            key: entry.name,
            storedBytes: info.size,
            modifiedMs: info.mtimeMs,
          };
        } catch {
          // removed meanwhile
        }
      }
    }
  }

  async removeStaleParts(olderThanMs: number, nowMs: number = Date.now()): Promise<number> {
    const folder = join(this.root, PARTS);
    let removed = 0;
    for (const entry of await this.entries(folder)) {
      if (!entry.name.endsWith('.part')) continue;
      const path = join(folder, entry.name);
      try {
        const info = await stat(path);
        if (nowMs - info.mtimeMs < olderThanMs) continue;
        await rm(path, { force: true });
        removed += 1;
      } catch {
        // removed meanwhile
      }
    }
    return removed;
  }

  private async entries(folder: string): Promise<Dirent[]> {
    try {
      return await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
