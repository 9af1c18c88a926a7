/** Gateway Key secrets: `gw_` + 40 random base32 characters, stored only as a SHA-256 hash. */
import { timingSafeEqual } from 'node:crypto';
import { sha256Hex } from './canonical-json.js';
import { randomBase32 } from './ids.js';

export const KEY_SECRET_PATTERN = /^gw_[A-Za-z0-9_-]{32,}$/;

/** Webhook signing secrets (webhooks/secret-box.ts makes them: `whsec_` + 32 bytes base64url). */
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9_-]{32,}$/;

export function newKeySecret(): string {
  return `gw_${randomBase32(40)}`;
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/** Constant-time comparison of two strings of any length. */
export function constantTimeEqual(left: string, right: string): boolean {
  const a = Buffer.from(sha256Hex(left), 'hex');
  const b = Buffer.from(sha256Hex(right), 'hex');
  return timingSafeEqual(a, b);
}
