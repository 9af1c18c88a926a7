/** Scope checks shared by every face: a missing scope is 403 gateway_key_scope_denied. */
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
