/**
 * Gateway Keys managed over /svc/v1/keys and the CLI (one service for both).
 *
 * - A key belongs to the caller's Project; another Project's key id answers 404 key_not_found.
 * - The secret is generated here, stored only as its SHA-256 hash, and returned once, in the
 *   create response. The idempotency record stores the response WITHOUT the secret, so a replay
 *   answers the record with `secret: null` (a lost secret is never recoverable: revoke the key).
 * - Expiry is checked on every request against the clock (exact on every replica); a revocation
 *   takes effect at once on the replica that made it and within auth.key_cache_ms elsewhere.
 * - `keys:admin` is the Project's administrator: it can grant any scope, including keys:admin.
 */

import type { Static } from '@sinclair/typebox';
import { type Config, SCOPES } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { type Clock, parseRfc3339 } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { hashSecret, newKeySecret } from '../lib/secrets.js';
import { inferenceLimitsOf } from '../limits/limits-source.js';
import { spendCapsOf } from '../money/spend-caps.js';
import type { NewManagedKey } from '../store/keys-port.js';
import type { IdempotentResult, KeyRecord, Store } from '../store/port.js';
import { idempotencyOfWrite } from './idempotency.js';
import { CreateKeyBody, RevokeKeyBody } from './key-schemas.js';
import { keyBody } from './key-views.js';
import type { Caller, WriteRequest } from './service.js';
import { validateBody } from './validate.js';

export type CreateKeyFields = Static<typeof CreateKeyBody>;

export interface KeysDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** Called after a revocation commits (the authenticator forgets the key at once). */
  onRevoked?: (keyId: string) => void;
}

export class KeysService {
  private readonly aliases: ReadonlySet<string>;

  /** Inference limits of the keys declared in the configuration (they win over the row's: limits-source.ts). */
  private readonly declaredLimits: ReadonlyMap<string, ReturnType<typeof inferenceLimitsOf>>;

  constructor(private readonly deps: KeysDeps) {
    this.aliases = new Set(deps.config.models.map((model) => model.alias));
    this.declaredLimits = new Map(
      deps.config.keys.map((key) => [key.id, inferenceLimitsOf(key.inference_limits)]),
    );
  }

  /** The record as it applies: a configured key shows the configuration's inference limits. */
  private effective(key: KeyRecord): KeyRecord {
    const declared = this.declaredLimits.get(key.id);
    if (!declared) return key;
    const { requestsPerMinute: _requests, tokensPerMinute: _tokens, ...caps } = key.limits;
    return { ...key, limits: { ...caps, ...declared } };
  }

  private idempotency(request: WriteRequest) {
    return idempotencyOfWrite(request, this.deps.clock.now(), this.deps.config.idempotency.retention_hours);
  }

  /** Validates the fields and builds the key (with a fresh secret) for `projectId`. */
  private newKey(projectId: string, fields: CreateKeyFields): { key: NewManagedKey; secret: string } {
    if (!this.deps.config.projects.some((project) => project.id === projectId))
      throw new GatewayError('invalid_request', `project: ${projectId} is not a configured Project`);
    const nowMs = this.deps.clock.now();
    const secret = newKeySecret();
    const unknown = (fields.models ?? []).findIndex((alias) => !this.aliases.has(alias));
    if (unknown >= 0) {
      throw new GatewayError(
        'invalid_request',
        `models.${unknown}: ${fields.models![unknown]} is not a configured model alias`,
        {
          param: `models.${unknown}`,
        },
      );
    }
    return {
      secret,
      key: {
        id: newId('key'),
        projectId,
        secretHash: hashSecret(secret),
        scopes: [...fields.scopes],
        label: fields.label ?? null,
        createdAt: new Date(nowMs).toISOString(),
        expiresAt: expiryOf(fields, nowMs),
        models: fields.models ? [...fields.models] : null,
        limits: { ...spendCapsOf(fields.caps), ...inferenceLimitsOf(fields.inference_limits) },
      },
    };
  }

  private render = (record: KeyRecord) => ({ ...keyBody(record, this.deps.clock.now()), secret: null });

  /** POST /svc/v1/keys: 201 with the secret; a replay 200 with `secret: null`. */
  async create(request: WriteRequest): Promise<IdempotentResult> {
    const fields = validateKeyFields(request.body);
    const { key, secret } = this.newKey(request.caller.projectId, fields);
    const result = await this.deps.store.keys.create(key, this.idempotency(request), this.render);
    return result.replayed ? result : { ...result, body: { ...(result.body as object), secret } };
  }

  /** The CLI's create (no idempotency key): returns the record body with its secret. */
  async createDirect(projectId: string, fields: CreateKeyFields) {
    const valid = validateKeyFields(fields);
    const { key, secret } = this.newKey(projectId, valid);
    const result = await this.deps.store.keys.create(key, null, this.render);
    return { ...(result.body as object), secret };
  }

  async list(caller: Caller) {
    const nowMs = this.deps.clock.now();
    const keys = await this.deps.store.listKeys(caller.projectId);
    return { object: 'list' as const, data: keys.map((key) => keyBody(this.effective(key), nowMs)) };
  }

  async get(caller: Caller, id: string) {
    const key = await this.deps.store.keys.get(caller.projectId, id);
    if (!key) throw new GatewayError('key_not_found', 'Gateway Key not found.');
    return keyBody(this.effective(key), this.deps.clock.now());
  }

  /** POST /svc/v1/keys/{id}/revoke: 201 when revoked now, 200 when it already was. */
  async revoke(request: WriteRequest, id: string): Promise<IdempotentResult> {
    validateBody(RevokeKeyBody, request.body);
    const result = await this.deps.store.keys.revoke(
      { projectId: request.caller.projectId, id, revokedAt: new Date(this.deps.clock.now()).toISOString() },
      this.idempotency(request),
      (record) => keyBody(record, this.deps.clock.now()),
    );
    this.deps.onRevoked?.(id);
    return result;
  }

  /** The CLI's revoke: by id in whichever Project holds it. */
  async revokeDirect(id: string) {
    const key = (await this.deps.store.listKeys()).find((candidate) => candidate.id === id);
    if (!key) throw new GatewayError('key_not_found', `Gateway Key ${id} not found.`);
    const result = await this.deps.store.keys.revoke(
      { projectId: key.projectId, id, revokedAt: new Date(this.deps.clock.now()).toISOString() },
      null,
      (record) => keyBody(record, this.deps.clock.now()),
    );
    return result.body;
  }
}

/** Validates a create body; an unknown scope is named with the list of known ones. */
function validateKeyFields(body: unknown): CreateKeyFields {
  const scopes = (body as { scopes?: unknown } | null)?.scopes;
  if (Array.isArray(scopes)) {
    const index = scopes.findIndex((scope) => !(SCOPES as readonly unknown[]).includes(scope));
    if (index >= 0)
      throw new GatewayError(
        'invalid_request',
        `scopes.${index}: ${JSON.stringify(scopes[index])} is not a scope (known: ${SCOPES.join(', ')})`,
        { param: `scopes.${index}` },
      );
  }
  return validateBody(CreateKeyBody, body);
}

function expiryOf(fields: CreateKeyFields, nowMs: number): string | null {
  if (fields.expires_at !== undefined && fields.ttl_seconds !== undefined)
    throw new GatewayError('invalid_request', 'expires_at and ttl_seconds are exclusive; send one', {
      param: 'expires_at',
    });
  if (fields.ttl_seconds !== undefined) return new Date(nowMs + fields.ttl_seconds * 1000).toISOString();
  if (fields.expires_at === undefined) return null;
  const expiresMs = parseRfc3339(fields.expires_at);
  if (expiresMs === undefined)
    throw new GatewayError('invalid_request', 'expires_at: must be an RFC 3339 date-time', {
      param: 'expires_at',
    });
  if (expiresMs <= nowMs)
    throw new GatewayError('invalid_request', 'expires_at: must be in the future', { param: 'expires_at' });
  return new Date(expiresMs).toISOString();
}
