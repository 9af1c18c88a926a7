/**
 * The keys sub-port of the store (Store.keys): Gateway Keys managed over /svc/v1/keys and the CLI.
 * Every operation is one transaction and is scoped to a Project, so another Project's key id
 * behaves exactly like an unknown one. Idempotent writes store their response in the same
 * transaction (the rendered body never holds the secret: it is shown once, by the caller).
 */

import type { Idempotency, IdempotentResult, KeyLimits, KeyRecord, NewKey, Render } from './records.js';

export type { KeyLimits };

/** Limits carried by a key row (JSON column `limits`): spend caps and inference rate limits. */
export interface NewManagedKey extends NewKey {
  expiresAt: string | null;
  /** Model aliases the key may use; null = every alias. */
  models: string[] | null;
  limits: KeyLimits;
}

export interface RevokeKeyInput {
  projectId: string;
  id: string;
  revokedAt: string;
}

export interface KeysRepository {
  /** Inserts the key; with an idempotency key, a replay returns the stored body (200). */
  create(
    key: NewManagedKey,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult>;
  get(projectId: string, id: string): Promise<KeyRecord | undefined>;
  /**
   * Revokes a key of the Project: 201 when this call revoked it, 200 with the record unchanged when
   * it was already revoked. Throws GatewayError key_not_found.
   */
  revoke(
    input: RevokeKeyInput,
    idempotency: Idempotency | null,
    render: Render<KeyRecord>,
  ): Promise<IdempotentResult>;
}
