/**
 * The record of received requests: a ring of the last `capacity` requests, so a benchmark pushing
 * millions of calls through the simulator keeps constant memory.
 */
import type { RecordedRequest } from './types.js';

export interface RequestFilter {
  wire?: string | undefined;
  model?: string | undefined;
}

interface Entry {
  record: RecordedRequest;
  model: string | undefined;
}

export class RequestRecorder {
  private entries: Array<Entry | undefined>;
  private next = 0;
  private size = 0;

  constructor(private readonly capacity = 10_000) {
    this.entries = new Array<Entry | undefined>(capacity);
  }

  add(record: RecordedRequest, model: string | undefined): void {
    this.entries[this.next] = { record, model };
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size += 1;
  }

  /** Oldest first. */
  list(filter: RequestFilter = {}): RecordedRequest[] {
    const result: RecordedRequest[] = [];
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let offset = 0; offset < this.size; offset++) {
      const entry = this.entries[(start + offset) % this.capacity];
      if (entry === undefined) continue;
      if (filter.wire !== undefined && entry.record.wire !== filter.wire) continue;
      if (filter.model !== undefined && entry.model !== filter.model) continue;
      result.push(entry.record);
    }
    return result;
  }

  clear(): void {
    this.entries = new Array<Entry | undefined>(this.capacity);
    this.next = 0;
    this.size = 0;
  }
}
