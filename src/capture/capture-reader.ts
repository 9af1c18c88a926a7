/**
 * Reading a capture back by attempt id, within the caller's Project: the object filed under the
 * attempt (capture-keys.ts), following a pointer once (a fallback's earlier attempts), unless
 * retention has passed since the attempt was created (expired captures read as absent even before
 * the sweep deletes them). Another Project's attempt, an unknown id, capture off, expired or a
 * dropped write all read the same: absent.
 */
import type { Readable } from 'node:stream';
import type { Clock } from '../lib/clock.js';
import { ObjectIntegrityError, type ObjectStore } from '../objects/port.js';
import { type CaptureDocument, type CaptureView, parseStoredCapture } from './capture-document.js';
import { captureAddressOf } from './capture-keys.js';
import type { CapturePolicy } from './capture-policy.js';

/** The attempt detail's `capture` field: presence only, never a body. */
export interface CaptureStatus {
  available: boolean;
  expires_at: string | null;
}

async function textOf(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export class CaptureReader {
  constructor(private readonly deps: { objects: ObjectStore; policy: CapturePolicy; clock: Clock }) {}

  /** The capture of `attemptId` in `projectId`, or undefined (none, expired, another Project's). */
  async read(projectId: string, attemptId: string): Promise<CaptureView | undefined> {
    const address = captureAddressOf(attemptId);
    if (!address) return undefined;
    const expiresMs = address.timeMs + this.deps.policy.of(projectId).retentionMs;
    if (this.deps.clock.now() >= expiresMs) return undefined;
    let stored = await this.load(projectId, address.key);
    if (stored?.object === 'capture_pointer') stored = await this.load(projectId, stored.key);
    if (stored?.object !== 'capture') return undefined;
    const document: CaptureDocument = stored;
    return {
      object: 'attempt.capture',
      attempt_id: attemptId,
      call_attempt_ids: document.attempt_ids,
      captured_at: document.captured_at,
      expires_at: new Date(expiresMs).toISOString(),
      request: document.request,
      response: document.response,
    };
  }

  /**
   * Whether `attemptId` has a capture the caller could read, and until when (the attempt detail's
   * field). An object store that cannot answer reads as not available rather than failing the detail.
   */
  async status(projectId: string, attemptId: string): Promise<CaptureStatus> {
    try {
      const view = await this.read(projectId, attemptId);
      return view ? { available: true, expires_at: view.expires_at } : { available: false, expires_at: null };
    } catch {
      return { available: false, expires_at: null };
    }
  }

  private async load(projectId: string, key: string) {
    let stream: Readable | undefined;
    try {
      stream = await this.deps.objects.get(projectId, key);
      if (!stream) return undefined;
      return parseStoredCapture(await textOf(stream));
    } catch (error) {
      // A sealed object that does not authenticate (moved, tampered, another key) is no capture.
      if (error instanceof ObjectIntegrityError) return undefined;
      throw error;
    }
  }
}
