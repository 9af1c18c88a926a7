/**
 * The private object store port. Callers (files, batches, deferred responses) see only this; the
 * local folder (local-folder.ts) is the default adapter and an S3-compatible adapter can be added
 * behind the same interface without touching them.
 *
 * Invariants every adapter keeps:
 * - put is atomic: an object is either absent or complete at its key, never half written, even if
 *   the process is killed mid-write (a killed write leaves at most an unreferenced temporary part,
 *   which sweep() removes).
 * - objects live under their Project: get/delete in another Project never find them, and a sealed
 *   object is bound to its Project and key (moved elsewhere it fails authentication).
 * - sealed objects are encrypted at rest (AES-256-GCM, random 96-bit IV, 128-bit tag); reading one
 *   verifies the tag before any byte is handed out.
 * - a store that is unavailable for now (unreachable, reset, timed out, throttled, a 5xx, a full or
 *   failing disk) throws ObjectStoreUnavailableError (errors/gateway-error.ts), never the raw SDK or
 *   file-system error: every caller answers 503 object_store_unavailable with Retry-After.
 */
import type { Readable } from 'node:stream';

export interface PutOptions {
  /** Encrypt at rest; needs a sealing key (requireSealing()). */
  sealed: boolean;
  /** Refuse (ObjectTooLargeError) a body longer than this many bytes; nothing is kept. */
  maxBytes?: number;
}

export interface PutResult {
  /** Plaintext length. */
  bytes: number;
  /** SHA-256 of the plaintext, lowercase hex. */
  sha256: string;
}

export interface StoredObject {
  projectId: string;
  key: string;
  /** Size on disk (ciphertext for sealed objects). */
  storedBytes: number;
  modifiedMs: number;
}

export interface ObjectStore {
  /** Writes atomically; replaces an existing object at the same key. */
  put(projectId: string, key: string, body: Readable | Buffer, options: PutOptions): Promise<PutResult>;
  /** The plaintext as a stream, or undefined when the Project has no such object. */
  get(projectId: string, key: string): Promise<Readable | undefined>;
  /** Returns false when there was nothing to delete. */
  delete(projectId: string, key: string): Promise<boolean>;
  /** Every stored object (for the sweep). */
  list(): AsyncIterable<StoredObject>;
  /** Removes temporary parts older than `olderThanMs` (left by killed writes); returns how many. */
  removeStaleParts(olderThanMs: number, nowMs?: number): Promise<number>;
  /** Throws with a clear message when no sealing key is configured; `feature` names who needs it. */
  requireSealing(feature: string): void;
}

export class ObjectTooLargeError extends Error {
  override readonly name = 'ObjectTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
  }
}

/** A sealed object whose tag does not verify (tampered, truncated, wrong key, or moved). */
export class ObjectIntegrityError extends Error {
  override readonly name = 'ObjectIntegrityError';
}
