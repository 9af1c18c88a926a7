/**
 * A multipart form as the use cases see it: parts in arrival order, each file part's content a
 * stream that must be consumed (or abandoned by throwing) before the next part arrives. The HTTP
 * layer adapts its parser to this; the use cases never see the framework.
 */
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors/gateway-error.js';

export type FormPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; contentType: string; content: Readable };

export function unknownField(name: string): GatewayError {
  return new GatewayError('invalid_request', `${name}: unknown field`, { param: name });
}

/** A file part over the upload limit: the object store refused it (ObjectTooLargeError). */
export function fileTooLarge(maxBytes: number): GatewayError {
  return new GatewayError('request_too_large', `file: larger than the upload limit of ${maxBytes} bytes`, {
    param: 'file',
  });
}

export function repeatedField(name: string): GatewayError {
  return new GatewayError('invalid_request', `${name}: sent more than once`, { param: name });
}
