/**
 * The upstream call for bodies that are not one JSON document: GET and DELETE without a body,
 * multipart uploads and other streamed bodies (piped with backpressure, never buffered whole).
 * Same pool, timeouts, auth and failure classification as callUpstream. A streamed body cannot be
 * hashed in advance, so SigV4 signs it as UNSIGNED-PAYLOAD.
 */

import { Readable } from 'node:stream';
import { context, propagation } from '@opentelemetry/api';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import {
  failureBeforeAnswer,
  notSentError,
  type UpstreamEndpoint,
  type UpstreamResponse,
} from './upstream-call.js';

export interface RawUpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the connection's base path, e.g. '/files/file-abc'. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable | AsyncIterable<Buffer>;
  signal?: CancelSignal;
}

export async function callUpstreamRaw(
  endpoint: UpstreamEndpoint,
  request: RawUpstreamRequest,
): Promise<UpstreamResponse> {
  const path = `${endpoint.basePath}${request.path}`;
  const headers: Record<string, string> = { ...request.headers };
  let signedBody = '';
  if (typeof request.body === 'string') signedBody = request.body;
  else if (Buffer.isBuffer(request.body)) signedBody = request.body.toString('latin1');
  else if (request.body !== undefined) headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
  try {
    Object.assign(headers, endpoint.authHeaders(request.method, path, signedBody, headers));
  } catch (error) {
    throw notSentError(error);
  }
  propagation.inject(context.active(), headers); // W3C trace context, as in upstream-call.ts
  try {
    const response = await endpoint.dispatcher.request({
      origin: endpoint.origin,
      path,
      method: request.method,
      headers,
      body: wireBody(request.body),
      signal: request.signal,
      headersTimeout: endpoint.firstByteTimeoutMs,
      bodyTimeout: endpoint.idleTimeoutMs,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  } catch (error) {
    throw failureBeforeAnswer(error, endpoint.name);
  }
}

function wireBody(body: RawUpstreamRequest['body']): string | Buffer | Readable | null {
  if (body === undefined) return null;
  if (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof Readable) return body;
  return Readable.from(body, { objectMode: false });
}
