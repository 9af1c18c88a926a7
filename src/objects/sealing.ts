/**
 * Object framing and sealing. Every stored object starts with a 5-byte header, so an object says
 * how to read it: 'SVCO' then 0x00 (plain: the bytes follow) or 0x01 (sealed: a 12-byte random IV,
 * the AES-256-GCM ciphertext, then the 16-byte tag). The additional authenticated data binds a
 * sealed object to its Project and key, so a file copied or renamed to another place fails to open.
 */
import { type CipherGCM, createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ObjectIntegrityError } from './port.js';

export const MAGIC = Buffer.from('SVCO', 'ascii');
export const HEADER_BYTES = MAGIC.length + 1;
const PLAIN = 0x00;
const SEALED = 0x01;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type Framing = 'plain' | 'sealed';

/** A 32-byte key from base64 (44 characters) or hex (64 characters); throws naming the problem. */
export function parseSealingKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/]{43}=?$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (key?.length !== 32) {
    throw new Error(
      `${source}: the sealing key must be 32 bytes, written as 64 hex characters or 44 base64 characters`,
    );
  }
  return key;
}

function additionalData(projectId: string, key: string): Buffer {
  return Buffer.from(`svc-object\u0000${projectId}\u0000${key}`, 'utf8');
}

export function plainHeader(): Buffer {
  return Buffer.concat([MAGIC, Buffer.from([PLAIN])]);
}

/** Header (with a fresh IV) and the cipher that encrypts the body after it. */
export function startSealing(
  sealingKey: Buffer,
  projectId: string,
  key: string,
): { header: Buffer; cipher: CipherGCM } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey, iv);
  cipher.setAAD(additionalData(projectId, key));
  return { header: Buffer.concat([MAGIC, Buffer.from([SEALED]), iv]), cipher };
}

/** Reads the framing byte of a stored object's first bytes. */
export function framingOf(head: Buffer): Framing {
  if (head.length < HEADER_BYTES || !head.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ObjectIntegrityError('not an object of this store (bad header)');
  }
  const kind = head[MAGIC.length];
  if (kind === PLAIN) return 'plain';
  if (kind === SEALED) return 'sealed';
  throw new ObjectIntegrityError(`unknown object framing ${String(kind)}`);
}

/** Decrypts a whole sealed object, verifying its tag: nothing is returned unverified. */
export function openSealed(stored: Buffer, sealingKey: Buffer, projectId: string, key: string): Buffer {
  const ivStart = HEADER_BYTES;
  const bodyStart = ivStart + IV_BYTES;
  if (stored.length < bodyStart + TAG_BYTES) throw new ObjectIntegrityError('sealed object is truncated');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey, stored.subarray(ivStart, bodyStart));
  decipher.setAAD(additionalData(projectId, key));
  decipher.setAuthTag(stored.subarray(stored.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(stored.subarray(bodyStart, stored.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new ObjectIntegrityError(
      'sealed object failed authentication (tampered, truncated, moved or wrong key)',
    );
  }
}
