/**
 * What one capture object holds (sealed JSON), and the view the API answers.
 *
 * A call's capture is one object, filed under the attempt that answered (the call's last); each
 * earlier attempt of the call (a fallback's failed targets) gets a small pointer object naming it,
 * so every attempt id of the call finds the same capture. A body is kept as UTF-8 text when its
 * content type is textual (JSON, server-sent events, text/*, forms) and the kept bytes decode
 * cleanly, else as base64; `truncated` says the body was longer than `bytes_kept`.
 */

export interface CapturedBody {
  content_type: string | null;
  /** `utf8`: `body` is the text; `base64`: `body` is the bytes in base64. */
  encoding: 'utf8' | 'base64';
  body: string;
  /** The whole body's length in bytes (sent or received), kept or not. */
  bytes: number;
  truncated: boolean;
}

export interface CaptureDocument {
  object: 'capture';
  version: 1;
  /** Every attempt of the call, in order; the last one answered. */
  attempt_ids: string[];
  captured_at: string;
  request: CapturedBody;
  response: CapturedBody & { status: number };
}

export interface CapturePointer {
  object: 'capture_pointer';
  version: 1;
  /** The key of the call's capture object, in the same Project. */
  key: string;
}

export type StoredCapture = CaptureDocument | CapturePointer;

/** GET /svc/v1/attempts/{id}/capture */
export interface CaptureView {
  object: 'attempt.capture';
  attempt_id: string;
  /** Every attempt of the same call (a fallback's attempts share one capture). */
  call_attempt_ids: string[];
  captured_at: string;
  expires_at: string;
  request: CapturedBody;
  response: CapturedBody & { status: number };
}

const TEXTUAL =
  /^(text\/|application\/(json|x-ndjson|x-www-form-urlencoded|xml)|[a-z]+\/[a-z0-9.+-]*\+json)/i;

/** Drops an incomplete UTF-8 sequence at the end of a cut body (at most 3 bytes). */
function completeUtf8(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back
    if (byte < 0x80) return bytes;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

export function capturedBody(
  contentType: string | null,
  kept: Buffer,
  bytes: number,
  truncated: boolean,
): CapturedBody {
  if (contentType === null || TEXTUAL.test(contentType)) {
    const text = truncated ? completeUtf8(kept) : kept;
    const decoded = new TextDecoder('utf-8', { fatal: false }).decode(text);
    if (!decoded.includes('\uFFFD') || Buffer.from(decoded).equals(text))
      return { content_type: contentType, encoding: 'utf8', body: decoded, bytes, truncated };
  }
  return { content_type: contentType, encoding: 'base64', body: kept.toString('base64'), bytes, truncated };
}

/** The stored JSON back, or undefined when it is not a capture object of a version this code reads. */
export function parseStoredCapture(text: string): StoredCapture | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const stored = value as { object?: unknown; version?: unknown; key?: unknown };
  if (stored.version !== 1) return undefined;
  if (stored.object === 'capture') return value as CaptureDocument;
  if (stored.object === 'capture_pointer' && typeof stored.key === 'string') return value as CapturePointer;
  return undefined;
}
