/**
 * Gateway Key authentication. The key arrives in `x-api-key` or `Authorization: Bearer`; both
 * present and different fails. Secrets are hashed (SHA-256) before the store lookup and never
 * logged or forwarded.
 *
 * Staleness bound (docs/configuration.md `auth.key_cache_ms`, default 2000 ms): a replica trusts a
 * looked-up key for at most key_cache_ms, so a revocation made anywhere takes effect on every
 * replica within that bound; on the replica that revoked it (keys API), at once (forget()).
 * Expiry needs no bound: the cached expires_at is compared with the clock on every request.
 * Unknown secrets are cached too (bounded map), so a newly created key may take up to the same
 * bound to work on a replica that was just asked for that very secret (it never is in practice:
 * secrets are random).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from '../governance/service.js';
import type { Clock } from '../lib/clock.js';
import { hashSecret, KEY_SECRET_PATTERN } from '../lib/secrets.js';
import { noteCaller, type RequestRecord } from '../observability/request-scope.js';
import type { KeyRecord, Store } from '../store/port.js';

/** Default of `auth.key_cache_ms`: how long a replica trusts a cached key lookup (revocation bound). */
export const KEY_CACHE_MS = 2000;
const MAX_CACHED_KEYS = 10_000;

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

interface CacheEntry {
  key: KeyRecord | undefined;
  fetchedMs: number;
}

export class Authenticator {
  /**
   * Keyed by the presented secret (held in memory only, like the request's own headers), so a
   * cached key costs a map lookup instead of a SHA-256 per request; the store is asked by hash.
   */
  private readonly cache = new Map<string, CacheEntry>();
  /** Lookups in flight: a burst of requests with an expired entry asks the store once, not once each. */
  private readonly lookups = new Map<string, Promise<KeyRecord | undefined>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly cacheMs: number = KEY_CACHE_MS,
  ) {}

  /** `request`: the request's record (http-hooks.ts requestRecordOf), which the Caller carries on. */
  async authenticate(headers: IncomingHttpHeaders, request?: RequestRecord): Promise<Caller> {
    const secret = presentedSecret(headers);
    const now = this.clock.now();
    let entry = this.cache.get(secret);
    if (!entry || now - entry.fetchedMs >= this.cacheMs) {
      const hash = hashSecret(secret);
      let lookup = this.lookups.get(hash);
      if (!lookup) {
        const started = this.store.findKeyByHash(hash).finally(() => {
          if (this.lookups.get(hash) === started) this.lookups.delete(hash);
        });
        lookup = started;
        this.lookups.set(hash, started);
      }
      entry = { key: await lookup, fetchedMs: now };
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
      this.cache.set(secret, entry);
    }
    const key = entry.key;
    if (!key || key.revokedAt !== null)
      throw new GatewayError('authentication_failed', 'Invalid or revoked Gateway Key.');
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now)
      throw new GatewayError('authentication_failed', 'The Gateway Key has expired.');
    noteCaller(request, key.projectId, key.id);
    return { keyId: key.id, projectId: key.projectId, scopes: key.scopes, models: key.models, request };
  }

  /** Drops every cached lookup of `keyId` (after this replica revoked it), and lookups in flight. */
  forget(keyId: string): void {
    for (const [secret, entry] of this.cache) if (entry.key?.id === keyId) this.cache.delete(secret);
    this.lookups.clear();
  }
}

export { requireModel, requireScopes } from '../governance/scopes.js';
