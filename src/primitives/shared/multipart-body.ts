/**
 * Builds a multipart/form-data body around one streamed file, with an exact Content-Length (the
 * file's size is known), so uploads go upstream without chunked encoding and without buffering the
 * file. Field values and the filename are escaped as browsers and the official SDKs do
 * (quotes and line breaks percent-encoded in the disposition header).
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface MultipartFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: number;
  content: Readable | AsyncIterable<Buffer>;
}

export interface MultipartBody {
  contentType: string;
  contentLength: number;
  body: AsyncIterable<Buffer>;
}

function escapeName(value: string): string {
  return value.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

export function multipartBody(
  fields: ReadonlyArray<readonly [string, string]>,
  file: MultipartFile,
): MultipartBody {
  const boundary = `----svc-gateway-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = fields.map(([name, value]) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"\r\n\r\n${value}\r\n`,
      'utf8',
    ),
  );
  const fileHead = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(file.field)}"; filename="${escapeName(file.filename)}"\r\n` +
      `Content-Type: ${file.contentType}\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  const head = Buffer.concat([...parts, fileHead]);
  async function* body(): AsyncIterable<Buffer> {
    yield head;
    for await (const chunk of file.content) yield chunk as Buffer;
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + file.bytes + tail.length,
    body: body(),
  };
}
