/**
 * Scope checks shared by every face: a missing scope is 403 gateway_key_scope_denied; a model alias
 * outside the key's list is 403 model_not_allowed.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from './service.js';

export function requireScopes(caller: Caller, scopes: readonly string[]): void {
  const missing = scopes.filter((scope) => !caller.scopes.includes(scope));
  if (missing.length > 0) {
    throw new GatewayError(
      'gateway_key_scope_denied',
      `The Gateway Key lacks the scope ${missing.join(' and ')}.`,
    );
  }
}

/** At least one of `scopes` (a read open to several roles); else 403 naming them. */
export function requireAnyScope(caller: Caller, scopes: readonly string[]): void {
  if (scopes.some((scope) => caller.scopes.includes(scope))) return;
  throw new GatewayError(
    'gateway_key_scope_denied',
    `The Gateway Key lacks the scope ${scopes.join(' or ')}.`,
  );
}

/**
 * A key restricted to model aliases may call only those: else 403 model_not_allowed. `body` is the
 * request's parsed JSON; a missing or non-string `model` is left to the endpoint's own validation.
 */
export function requireModel(caller: Caller, body: unknown): void {
  if (!caller.models) return;
  const model = body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  if (typeof model !== 'string' || caller.models.includes(model)) return;
  throw new GatewayError(
    'model_not_allowed',
    `model: this Gateway Key may not use ${model} (allowed: ${caller.models.join(', ')})`,
    { param: 'model' },
  );
}
