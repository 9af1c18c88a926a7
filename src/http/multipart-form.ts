/**
 * Multipart uploads (POST /v1/files, POST /v1/audio/transcriptions): @fastify/multipart is
 * registered inside the uploading routes' own scope (its parser never applies elsewhere; the
 * catch-all buffer parser of body.ts still serves every other content type). Parts are handed to
 * the use case as a stream of FormParts, file content unbuffered. Busboy's own file limit sits one
 * byte above the configured upload limit, so the object store (which counts) is what refuses a
 * file one byte too large; a Content-Length far beyond the limit is refused before reading.
 */
import { finished, PassThrough, type Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { FormPart } from '../gateway/form-parts.js';
import { checkText } from './input-guard.js';

const FIELD_BYTES = 64 * 1024;
const MAX_FIELDS = 16;
/** Room for part headers and text fields around the file. */
const FORM_OVERHEAD_BYTES = MAX_FIELDS * FIELD_BYTES + 64 * 1024;

export async function registerMultipart(scope: FastifyInstance, maxUploadBytes: number): Promise<void> {
  await scope.register(multipart, {
    throwFileSizeLimit: false,
    limits: {
      fileSize: maxUploadBytes + 1,
      files: 1,
      fields: MAX_FIELDS,
      fieldSize: FIELD_BYTES,
      parts: MAX_FIELDS + 1,
    },
  });
}

/** 400 unless the body is multipart; 413 when Content-Length alone exceeds the limit. */
export function checkMultipart(request: FastifyRequest, maxUploadBytes: number): void {
  if (!request.isMultipart()) {
    throw new GatewayError('invalid_request', 'Content-Type must be multipart/form-data.');
  }
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length > maxUploadBytes + FORM_OVERHEAD_BYTES) {
    throw new GatewayError(
      'request_too_large',
      `file: larger than the upload limit of ${maxUploadBytes} bytes`,
      { param: 'file' },
    );
  }
}

function partsError(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return new GatewayError('invalid_request', 'file: send exactly one file part', { param: 'file' });
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new GatewayError('invalid_request', `The form has more than ${MAX_FIELDS} fields.`);
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return new GatewayError('invalid_request', (error as Error).message);
    default:
      return error instanceof Error && /multipart|boundary|terminated early|end of form/i.test(error.message)
        ? new GatewayError('invalid_request', `Malformed multipart body: ${error.message}`)
        : error;
  }
}

/**
 * The file part's content as the use case reads it. A body that ends before the closing boundary
 * leaves busboy's file stream closed without an end: that is the client's malformed upload (400),
 * not the store's or the object store's failure.
 */
function untilClosingBoundary(file: Readable, field: string): Readable {
  const content = new PassThrough();
  // A part the use case refused before reading it has no reader: its error must not be unhandled
  // (a reader that comes later still sees it, as the stream's `errored`).
  content.on('error', () => {});
  // pipe(), unlike pipeline(), leaves `content` alive on a source error, so it carries ours instead.
  finished(file, (error) => {
    if (error === undefined || error === null) return;
    content.destroy(
      new GatewayError('invalid_request', `${field}: the upload ended before the form's closing boundary`, {
        param: field,
      }),
    );
  });
  file.pipe(content);
  return content;
}

export async function* formParts(request: FastifyRequest): AsyncIterable<FormPart> {
  try {
    for await (const part of request.parts()) {
      checkText(part.fieldname, 'form field name');
      if (part.type === 'file') {
        checkText(part.filename, `${part.fieldname}: file name`);
        yield {
          kind: 'file',
          name: part.fieldname,
          filename: part.filename,
          contentType: part.mimetype,
          content: untilClosingBoundary(part.file, part.fieldname),
        };
        continue;
      }
      if (part.valueTruncated || part.fieldnameTruncated) {
        throw new GatewayError('invalid_request', `${part.fieldname}: longer than ${FIELD_BYTES} bytes`, {
          param: part.fieldname,
        });
      }
      checkText(String(part.value), part.fieldname);
      yield { kind: 'field', name: part.fieldname, value: String(part.value) };
    }
  } catch (error) {
    throw partsError(error);
  }
}

/**
 * After a refusal mid-upload: stop parsing and let the rest of the body drain, so the client
 * finishes sending and reads the error instead of seeing a reset connection.
 */
export function abandonBody(request: FastifyRequest): void {
  request.raw.unpipe();
  request.raw.resume();
}
