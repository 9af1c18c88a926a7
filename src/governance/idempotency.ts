/**
 * Idempotency-Key handling for governance POSTs: 1-255 visible ASCII characters, scoped to
 * (Project, Gateway Key id, key); "same request" = same method, path and canonical JSON body.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.js';
import type { Idempotency } from '../store/port.js';

const LEGAL_KEY = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined || header === '') {
    throw new GatewayError(
      'invalid_idempotency_key',
      'The Idempotency-Key header is required on this endpoint.',
    );
  }
  if (Array.isArray(header) || !LEGAL_KEY.test(header)) {
    throw new GatewayError(
      'invalid_idempotency_key',
      'Idempotency-Key must be one header of 1-255 visible ASCII characters (0x21-0x7E).',
    );
  }
  return header;
}

/**
 * The Idempotency-Key of an endpoint where it is optional (POST /v1/files, /v1/batches: stock SDKs
 * send none): absent means no replay protection; present, it must be legal.
 */
export function optionalIdempotencyKey(header: string | string[] | undefined): string | undefined {
  return header === undefined ? undefined : checkIdempotencyKey(header);
}

export interface IdempotencyRequest {
  projectId: string;
  keyId: string;
  key: string;
  method: string;
  path: string;
  body: unknown;
  nowMs: number;
  retentionMs: number;
}

export function idempotencyFor(request: IdempotencyRequest): Idempotency {
  return {
    projectId: request.projectId,
    keyId: request.keyId,
    key: request.key,
    fingerprint: sha256Hex(`${request.method} ${request.path}\n${canonicalJson(request.body)}`),
    createdAt: new Date(request.nowMs).toISOString(),
    expiresAt: new Date(request.nowMs + request.retentionMs).toISOString(),
  };
}

/** The Idempotency of a governance write request (scope, fingerprint, retention from now). */
export function idempotencyOfWrite(
  request: {
    caller: { projectId: string; keyId: string };
    idempotencyKey: string;
    method: string;
    path: string;
    body: unknown;
  },
  nowMs: number,
  retentionHours: number,
): Idempotency {
  return idempotencyFor({
    projectId: request.caller.projectId,
    keyId: request.caller.keyId,
    key: request.idempotencyKey,
    method: request.method,
    path: request.path,
    body: request.body,
    nowMs,
    retentionMs: retentionHours * 3_600_000,
  });
}
