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
