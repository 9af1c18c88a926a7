/**
 * The body of an upstream answer as the gateway reads it: as text, as chunks (`for await`), or
 * discarded. undici's `request()` gives a Node Readable that does this; callUpstream instead
 * dispatches with its own handler and hands out a DispatchedBody, which queues the chunks undici
 * delivers and gives them to one reader. A Readable costs a stream's path about a tenth of its
 * work: each chunk and the end go through `process.nextTick` several times, and reading it with
 * `for await` adds an async generator and an end-of-stream watcher per call (docs/performance.md,
 * "The request path").
 *
 * What it keeps of the Readable's behaviour, which the attempt runner's classification relies on:
 * - chunks arrive in order; the reader gets what is queued, joined, at each step;
 * - a failure (the upstream dropped, a timeout, the call aborted) discards what is queued and is
 *   thrown to the reader as the same error object;
 * - `destroy()` before the end aborts the upstream request (its connection is not reused) and the
 *   reader sees the end; leaving a `for await` early does the same;
 * - `text()` decodes UTF-8 and skips a byte order mark, as undici's does;
 * - past 64 KiB queued and unread, the connection is paused until the reader takes them.
 */
import type { Dispatcher } from 'undici';
import { errors as undiciErrors } from 'undici';

/** What the gateway's code uses of an upstream body (undici's Readable body has the same). */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  text(): Promise<string>;
  /** Reads and discards the rest (a large rest closes the connection instead). */
  dump(): Promise<unknown>;
  destroy(error?: Error): unknown;
}

/** Queued and unread bytes past which the upstream connection is paused (undici's default too). */
export const HIGH_WATER_MARK = 64 * 1024;

/** What dump() reads before it closes the connection instead (undici's default too). */
const DUMP_LIMIT = 128 * 1024;

const DONE: IteratorResult<Buffer> = { done: true, value: undefined };

export class DispatchedBody implements UpstreamBody {
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private state: 'open' | 'ended' | 'failed' | 'destroyed' = 'open';
  private failure: unknown;
  /** The reader waiting for a chunk, the end or a failure. */
  private waiting:
    | { resolve(result: IteratorResult<Buffer>): void; reject(error: unknown): void }
    | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** A chunk from undici. */
  push(chunk: Buffer): void {
    if (this.state !== 'open') return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued >= HIGH_WATER_MARK && !this.controller.paused) this.controller.pause();
  }

  /** The upstream's answer is complete. */
  end(): void {
    if (this.state !== 'open') return;
    this.state = 'ended';
    // A waiting reader means nothing is queued (push hands a chunk straight to it).
    this.settleWaiting();
  }

  /** The call failed after its headers: what is queued is dropped and the reader gets `error`. */
  fail(error: unknown): void {
    if (this.state !== 'open') return;
    this.state = 'failed';
    this.failure = error;
    this.drop();
    this.settleWaiting();
  }

  destroy(error?: Error): this {
    if (this.state === 'open') this.controller.abort(error ?? new undiciErrors.RequestAbortedError());
    if (this.state === 'open' || this.state === 'ended') this.state = 'destroyed';
    this.drop();
    this.settleWaiting();
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.next(),
      return: () => {
        this.destroy();
        return Promise.resolve(DONE);
      },
    };
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of this) {
      chunks.push(chunk);
      length += chunk.length;
    }
    if (length === 0) return '';
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
    const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    return bytes.toString('utf8', start);
  }

  async dump(): Promise<null> {
    let read = 0;
    try {
      for await (const chunk of this) {
        read += chunk.length;
        // Leaving the loop destroys the body, which closes the connection.
        if (read > DUMP_LIMIT) break;
      }
    } catch {
      // A failed body is discarded all the same.
    }
    return null;
  }

  private next(): Promise<IteratorResult<Buffer>> {
    if (this.queue.length > 0) {
      const value = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue, this.queued);
      this.drop();
      if (this.controller.paused) this.controller.resume();
      return Promise.resolve({ done: false, value });
    }
    if (this.state === 'open') {
      return new Promise((resolve, reject) => {
        this.waiting = { resolve, reject };
      });
    }
    return this.state === 'failed' ? Promise.reject(this.failure) : Promise.resolve(DONE);
  }

  private drop(): void {
    this.queue.length = 0;
    this.queued = 0;
  }

  private settleWaiting(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    if (this.state === 'failed') waiting.reject(this.failure);
    else waiting.resolve(DONE);
  }
}
