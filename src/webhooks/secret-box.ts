/**
 * Webhook signing secrets: made here (`whsec_` + 32 random bytes, base64url), shown once, and kept
 * in the store so a database reader cannot use them directly when the gateway has a sealing key
 * (objects.sealing_key_env / sealing_key_file): then the stored text is `sealed:v1:` + base64 of
 * IV, AES-256-GCM ciphertext and tag, with the Project and endpoint id as additional data (a sealed
 * secret copied to another endpoint fails to open). Without a sealing key it is `plain:` + the
 * secret (HMAC needs the secret itself, so a hash cannot do): docs/events.md says so.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED = 'sealed:v1:';
const PLAIN = 'plain:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function additionalData(projectId: string, endpointId: string): Buffer {
  return Buffer.from(`svc-webhook-secret\u0000${projectId}\u0000${endpointId}`, 'utf8');
}

export class SecretBox {
  constructor(private readonly sealingKey: Buffer | undefined) {}

  get sealed(): boolean {
    return this.sealingKey !== undefined;
  }

  /** The stored form of `secret` for one endpoint. */
  seal(secret: string, projectId: string, endpointId: string): string {
    if (!this.sealingKey) return `${PLAIN}${secret}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealingKey, iv);
    cipher.setAAD(additionalData(projectId, endpointId));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED}${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64')}`;
  }

  /** The secret of a stored form; throws when it cannot be opened (no key, wrong key, moved). */
  open(stored: string, projectId: string, endpointId: string): string {
    if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
    if (!stored.startsWith(SEALED)) throw new Error('unknown webhook secret format');
    if (!this.sealingKey) throw new Error('a sealed webhook secret needs the sealing key');
    const bytes = Buffer.from(stored.slice(SEALED.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.sealingKey, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(additionalData(projectId, endpointId));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }

  /** Whether `stored` holds `secret` (configuration sync: a changed secret starts a rotation). */
  holds(stored: string, secret: string, projectId: string, endpointId: string): boolean {
    try {
      return this.open(stored, projectId, endpointId) === secret;
    } catch {
      return false;
    }
  }
}
