/**
 * Gateway Key authentication. The key arrives in `x-api-key` or `Authorization: Bearer`; both
 * present and different fails. Secrets are hashed (SHA-256) before lookup and never logged or
 * forwarded. Lookups are cached for two seconds, so a revocation takes effect within two seconds.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from '../governance/service.js';
import type { Clock } from '../lib/clock.js';
import { hashSecret, KEY_SECRET_PATTERN } from '../lib/secrets.js';
import { noteCaller } from '../observability/request-scope.js';
import type { Store } from '../store/port.js';

/** How long a replica trusts a cached key lookup: the bound on revocation across replicas. */
export const KEY_CACHE_MS = 2000;

function presentedSecret(headers: IncomingHttpHeaders): string {
  const apiKey = headers['x-api-key'];
  const authorization = headers.authorization;
  if (Array.isArray(apiKey)) throw new GatewayError('authentication_failed', 'Send one x-api-key header.');
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match)
      throw new GatewayError('authentication_failed', 'Authorization must be "Bearer <Gateway Key>".');
    bearer = match[1];
  }
  if (apiKey !== undefined && bearer !== undefined && apiKey !== bearer) {
    throw new GatewayError(
      'authentication_failed',
      'x-api-key and Authorization carry different credentials.',
    );
  }
  const secret = apiKey ?? bearer;
  if (secret === undefined || secret === '') {
    throw new GatewayError(
      'authentication_failed',
      'A Gateway Key is required (x-api-key or Authorization: Bearer).',
    );
  }
  if (!KEY_SECRET_PATTERN.test(secret))
    throw new GatewayError('authentication_failed', 'Invalid Gateway Key.');
  return secret;
}

export class Authenticator {
  private readonly cache = new Map<string, { caller: Caller | undefined; expiresMs: number }>();
  /** Lookups in flight: a burst of requests with an expired entry asks the store once, not once each. */
  private readonly lookups = new Map<string, Promise<Caller | undefined>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async authenticate(headers: IncomingHttpHeaders): Promise<Caller> {
    const hash = hashSecret(presentedSecret(headers));
    const now = this.clock.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.expiresMs <= now) {
      let lookup = this.lookups.get(hash);
      if (!lookup) {
        lookup = this.lookup(hash).finally(() => this.lookups.delete(hash));
        this.lookups.set(hash, lookup);
      }
      entry = { caller: await lookup, expiresMs: now + KEY_CACHE_MS };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, entry);
    }
    if (!entry.caller) throw new GatewayError('authentication_failed', 'Invalid or revoked Gateway Key.');
    noteCaller(entry.caller.projectId, entry.caller.keyId);
    return entry.caller;
  }

  private async lookup(hash: string): Promise<Caller | undefined> {
    const key = await this.store.findKeyByHash(hash);
    return key && key.revokedAt === null
      ? { keyId: key.id, projectId: key.projectId, scopes: key.scopes }
      : undefined;
  }
}

export { requireScopes } from '../governance/scopes.js';
