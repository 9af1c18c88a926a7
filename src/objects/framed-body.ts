/**
 * The bytes an adapter stores for one put, as a stream of chunks: the framing header, then the body
 * (encrypted when sealed), then the GCM tag. Counts the plaintext, hashes it (SHA-256) and refuses
 * it past maxBytes while it flows, so adapters never hold a whole object to check it.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ObjectTooLargeError, type PutOptions, type PutResult } from './port.js';
import { plainHeader, startSealing } from './sealing.js';

export interface FramedBody {
  chunks: AsyncIterable<Buffer>;
  /** Valid once `chunks` has been read to its end. */
  result(): PutResult;
}

export function framedBody(
  body: Readable | Buffer,
  options: PutOptions,
  place: { sealingKey: Buffer | undefined; projectId: string; key: string },
): FramedBody {
  const hash = createHash('sha256');
  let bytes = 0;
  let digest: string | undefined;
  async function* chunks(): AsyncIterable<Buffer> {
    const sealing = options.sealed ? startSealing(place.sealingKey!, place.projectId, place.key) : undefined;
    yield sealing ? sealing.header : plainHeader();
    const source = Buffer.isBuffer(body) ? [body] : (body as AsyncIterable<Buffer | Uint8Array>);
    for await (const chunk of source) {
      const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      bytes += data.length;
      if (options.maxBytes !== undefined && bytes > options.maxBytes)
        throw new ObjectTooLargeError(options.maxBytes);
      hash.update(data);
      yield sealing ? sealing.cipher.update(data) : data;
    }
    if (sealing) yield Buffer.concat([sealing.cipher.final(), sealing.cipher.getAuthTag()]);
    digest = hash.digest('hex');
  }
  return {
    chunks: chunks(),
    result() {
      if (digest === undefined) throw new Error('framed body not fully read');
      return { bytes, sha256: digest };
    },
  };
}
