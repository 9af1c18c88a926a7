/**
 * The background writer of captures: a bounded queue in memory, emptied by a few writers that seal
 * each call's capture into the object store after its response is complete.
 *
 * The call's path only offers a capture (constant work, no I/O, never throws). A full queue (by
 * count or by the bytes its captures hold) drops the new capture; an object-store error drops the
 * capture being written; captures still queued when the process closes past its drain time are
 * dropped. Every drop is counted by reason (svc_capture_dropped_total) and logged at most once per
 * LOG_EVERY_MS, by Project and attempt id only: no body ever reaches a log line.
 */
import type { Logger } from 'pino';
import type { ObjectStore } from '../objects/port.js';
import type { BodyTap } from './body-tap.js';
import { type CaptureDocument, type CapturePointer, capturedBody } from './capture-document.js';
import { captureAddressOf } from './capture-keys.js';

export interface CallCapture {
  projectId: string;
  /** Every attempt of the call, in order; the last one answered. */
  attemptIds: readonly string[];
  capturedAtMs: number;
  request: { contentType: string | null; tap: BodyTap };
  response: { status: number; contentType: string | null; tap: BodyTap };
}

export const CAPTURE_DROP_REASONS = ['queue_full', 'object_store', 'shutdown'] as const;
export type CaptureDropReason = (typeof CAPTURE_DROP_REASONS)[number];

export interface CaptureWriterOptions {
  objects: ObjectStore;
  logger: Logger;
  onWritten?: () => void;
  onDropped?: (reason: CaptureDropReason) => void;
  /** Captures waiting at most (default 1000). */
  maxQueued?: number;
  /** Body bytes the waiting captures may hold at most (default 64 MiB). */
  maxQueuedBytes?: number;
  /** Captures written at the same time (default 2). */
  concurrency?: number;
}

export const DEFAULT_MAX_QUEUED = 1000;
export const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const LOG_EVERY_MS = 10_000;

function heldBytes(capture: CallCapture): number {
  return capture.request.tap.keptBytes + capture.response.tap.keptBytes;
}

export class CaptureWriter {
  private readonly queue: Array<{ capture: CallCapture; bytes: number }> = [];
  private queuedBytes = 0;
  private writing = 0;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private lastLogMs = 0;
  private unlogged = 0;
  private readonly maxQueued: number;
  private readonly maxQueuedBytes: number;
  private readonly concurrency: number;

  constructor(private readonly options: CaptureWriterOptions) {
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.concurrency = options.concurrency ?? 2;
  }

  /** Queues a call's capture; false (and counted) when it was dropped. Never throws, never waits. */
  offer(capture: CallCapture): boolean {
    if (capture.attemptIds.length === 0) return false;
    const bytes = heldBytes(capture);
    if (
      this.closed ||
      this.queue.length >= this.maxQueued ||
      this.queuedBytes + bytes > this.maxQueuedBytes
    ) {
      this.dropped(this.closed ? 'shutdown' : 'queue_full', capture);
      return false;
    }
    this.queue.push({ capture, bytes });
    this.queuedBytes += bytes;
    if (this.writing < this.concurrency) {
      this.writing += 1;
      setImmediate(() => void this.drain());
    }
    return true;
  }

  /** Resolves when nothing is queued or being written (tests, close). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no more captures; waits up to `waitMs` for the queue to empty, then drops what is left. */
  async close(waitMs: number): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.idle(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
    for (const { capture } of this.queue.splice(0)) this.dropped('shutdown', capture);
    this.queuedBytes = 0;
  }

  private async drain(): Promise<void> {
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        this.queuedBytes -= next.bytes;
        try {
          await this.write(next.capture);
          this.options.onWritten?.();
        } catch (error) {
          this.dropped('object_store', next.capture, error);
        }
      }
    } finally {
      this.writing -= 1;
      if (this.writing === 0 && this.queue.length === 0) {
        for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
    }
  }

  /** The call's capture under its last attempt, then a pointer under each earlier one. */
  private async write(capture: CallCapture): Promise<void> {
    const addressed = capture.attemptIds
      .map((attemptId) => ({ attemptId, address: captureAddressOf(attemptId) }))
      .filter((entry) => entry.address !== undefined);
    const main = addressed.at(-1);
    if (!main) throw new Error('no attempt id of the call carries a time');
    const { request, response } = capture;
    const document: CaptureDocument = {
      object: 'capture',
      version: 1,
      attempt_ids: [...capture.attemptIds],
      captured_at: new Date(capture.capturedAtMs).toISOString(),
      request: capturedBody(
        request.contentType,
        request.tap.content(),
        request.tap.bytes,
        request.tap.truncated,
      ),
      response: {
        status: response.status,
        ...capturedBody(
          response.contentType,
          response.tap.content(),
          response.tap.bytes,
          response.tap.truncated,
        ),
      },
    };
    const { objects } = this.options;
    await objects.put(capture.projectId, main.address!.key, Buffer.from(JSON.stringify(document)), {
      sealed: true,
    });
    for (const earlier of addressed.slice(0, -1)) {
      const pointer: CapturePointer = { object: 'capture_pointer', version: 1, key: main.address!.key };
      await objects.put(capture.projectId, earlier.address!.key, Buffer.from(JSON.stringify(pointer)), {
        sealed: true,
      });
    }
  }

  private dropped(reason: CaptureDropReason, capture: CallCapture, error?: unknown): void {
    this.options.onDropped?.(reason);
    const now = Date.now();
    if (now - this.lastLogMs < LOG_EVERY_MS) {
      this.unlogged += 1;
      return;
    }
    this.options.logger.warn(
      {
        reason,
        project: capture.projectId,
        attempt_id: capture.attemptIds.at(-1),
        dropped_unlogged: this.unlogged,
        ...(error ? { error: (error as Error).message } : {}),
      },
      'capture dropped: the call was served, its bodies were not kept',
    );
    this.lastLogMs = now;
    this.unlogged = 0;
  }
}
