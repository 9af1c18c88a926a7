/**
 * Small HTTP helpers shared by the simulator and its wire modules: body reading, JSON answers and
 * backpressure-aware writes (a stream writer awaits 'drain' instead of buffering a slow reader's
 * stream in memory; a client that went away ends the wait).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts)));
    request.on('error', reject);
  });
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** Writes one chunk; resolves false when the client is gone, after 'drain' when the buffer is full. */
export function writeChunk(response: ServerResponse, chunk: string): Promise<boolean> {
  if (response.destroyed || response.writableEnded) return Promise.resolve(false);
  if (response.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (open: boolean) => {
      response.off('drain', onDrain);
      response.off('close', onClose);
      resolve(open);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    response.on('drain', onDrain);
    response.on('close', onClose);
  });
}

/** Resolves once everything written so far has been handed to the socket (or the client left). */
export function flushed(response: ServerResponse): Promise<void> {
  if (response.destroyed || response.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    response.once('close', () => resolve());
    response.write('', () => resolve());
  });
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
