/** Gateway Key records -> /svc/v1 JSON (never the secret or its hash). Status is derived from the clock. */

import { inferenceLimitsFields } from '../limits/limits-source.js';
import { spendCapsFields } from '../money/spend-caps.js';
import type { KeyRecord } from '../store/port.js';

export type KeyStatus = 'active' | 'revoked' | 'expired';

export function keyStatus(key: KeyRecord, nowMs: number): KeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= nowMs) return 'expired';
  return 'active';
}

export function keyBody(key: KeyRecord, nowMs: number) {
  return {
    id: key.id,
    object: 'gateway_key' as const,
    project_id: key.projectId,
    label: key.label,
    scopes: key.scopes,
    models: key.models,
    caps: spendCapsFields(key.limits),
    inference_limits: inferenceLimitsFields(key.limits),
    status: keyStatus(key, nowMs),
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
  };
}
