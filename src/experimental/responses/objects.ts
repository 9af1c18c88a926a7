/** Sealed objects of a deferred response: `<id>.request` and `<id>.result`, JSON, AES-256-GCM at rest. */
import type { Readable } from 'node:stream';
import type { ObjectStore } from '../../objects/port.js';

export const requestKey = (id: string) => `${id}.request`;
export const resultKey = (id: string) => `${id}.result`;

export async function putSealedJson(
  objects: ObjectStore,
  projectId: string,
  key: string,
  value: unknown,
): Promise<void> {
  await objects.put(projectId, key, Buffer.from(JSON.stringify(value)), { sealed: true });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export async function getSealedJson(objects: ObjectStore, projectId: string, key: string): Promise<unknown> {
  const stream = await objects.get(projectId, key);
  if (!stream) return undefined;
  return JSON.parse((await collect(stream)).toString('utf8'));
}

/**
 * The sealed request of a background response served through the canonical model
 * (deferred-any-wire.ts); a responses-wire one is the upstream body itself (never `kind`).
 */
export interface AnyWireEnvelope {
  kind: 'canonical';
  /** The client's responses body, max_output_tokens explicit. */
  body: Record<string, unknown>;
  /** Svc-Route: only the alias's target on this connection. */
  pinned: string | null;
}

export function isAnyWireEnvelope(value: unknown): value is AnyWireEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const envelope = value as Record<string, unknown>;
  return envelope.kind === 'canonical' && typeof envelope.body === 'object' && envelope.body !== null;
}
