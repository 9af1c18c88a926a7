/**
 * The first `maxBytes` of a body as it passes (a request's text, the chunks written to a client),
 * with the whole length and whether it was cut. Copies at most `maxBytes` in total, however long
 * the body: the cost on a call's path is bounded by the capture limit.
 */
export class BodyTap {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  /** Every byte that passed, kept or not. */
  bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get truncated(): boolean {
    return this.bytes > this.kept;
  }

  add(chunk: string | Uint8Array): void {
    const length = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    this.bytes += length;
    const room = this.maxBytes - this.kept;
    if (room <= 0 || length === 0) return;
    let piece: Buffer;
    if (typeof chunk === 'string') {
      // A character is at least one byte: `room` characters hold at least `room` bytes.
      const data = Buffer.from(length <= room ? chunk : chunk.slice(0, room));
      piece = data.length <= room ? data : data.subarray(0, room);
    } else {
      // Copied: a writer may reuse its buffer once the write returns.
      piece = Buffer.from(Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, room)));
    }
    this.parts.push(piece);
    this.kept += piece.length;
  }

  /** The kept bytes. */
  content(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }
}
