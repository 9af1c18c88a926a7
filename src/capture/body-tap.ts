/**
 * The first `maxBytes` of a body as it passes (a request's text, the chunks written to a client),
 * with the whole length and whether it was cut. On the call's path a text chunk costs its UTF-8
 * length (Buffer.byteLength, no copy) and a reference (a slice past the limit, which V8 makes
 * without copying); a binary chunk is copied (at most `maxBytes` in all), since its writer may
 * reuse it. The text is encoded once, by content(), in the background writer.
 */
export class BodyTap {
  private readonly parts: Array<string | Buffer> = [];
  private kept = 0;
  private encoded: Buffer | undefined;
  /** Every byte that passed, kept or not. */
  bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get truncated(): boolean {
    return this.bytes > this.kept;
  }

  /** How many bytes content() holds: the whole body, or `maxBytes` of it. */
  get keptBytes(): number {
    return this.kept;
  }

  /** `byteLength`: the chunk's UTF-8 length when the caller knows it (a Content-Length), saving the scan. */
  add(chunk: string | Uint8Array, byteLength?: number): void {
    const length = byteLength ?? (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength);
    this.bytes += length;
    const room = this.maxBytes - this.kept;
    if (room <= 0 || length === 0) return;
    if (typeof chunk === 'string') {
      // A character is at least one byte: `room` characters hold at least `room` bytes (content() cuts).
      this.parts.push(length <= room ? chunk : chunk.slice(0, room));
    } else {
      this.parts.push(Buffer.from(Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(length, room))));
    }
    this.kept += Math.min(length, room);
    this.encoded = undefined;
  }

  /** The kept bytes (encoded once). */
  content(): Buffer {
    if (this.encoded) return this.encoded;
    const buffers = this.parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part));
    const whole = buffers.length === 1 ? buffers[0]! : Buffer.concat(buffers);
    this.encoded = whole.length > this.kept ? whole.subarray(0, this.kept) : whole;
    return this.encoded;
  }
}
