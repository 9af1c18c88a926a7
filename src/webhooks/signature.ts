/**
 * The `Svc-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * with one `v1=` per secret that signs (two during a rotation overlap: the new one first). A
 * receiver recomputes the HMAC over the raw bytes it received, compares in constant time against
 * each v1, and refuses a `t` outside its replay window (docs/events.md suggests 5 minutes).
 */
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'svc-signature';

export function signatureOf(secret: string, timestampSeconds: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex');
}

export function signatureHeader(
  secrets: readonly string[],
  timestampSeconds: number,
  body: string | Buffer,
): string {
  return [
    `t=${timestampSeconds}`,
    ...secrets.map((secret) => `v1=${signatureOf(secret, timestampSeconds, body)}`),
  ].join(',');
}
