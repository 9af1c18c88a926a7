/** Header rules shared by /v1/messages and /v1/messages/count_tokens. */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors/gateway-error.js';
import { requireScopes } from '../../governance/scopes.js';
import type { Caller } from '../../governance/service.js';
import { VENDORA_VERSION } from '../../primitives/messages/index.js';
import type { RouteMode } from './route-plan.js';

export function checkVendoraVersion(headers: IncomingHttpHeaders): void {
  const version = headers['vendora-version'];
  if (version !== VENDORA_VERSION) {
    throw new GatewayError(
      'invalid_request',
      version === undefined
        ? `vendora-version: header required; the only accepted value is ${VENDORA_VERSION}`
        : `vendora-version: ${String(version)} is not supported; the only accepted value is ${VENDORA_VERSION}`,
      { param: 'vendora-version' },
    );
  }
}

export function routeMode(headers: IncomingHttpHeaders): RouteMode | undefined {
  const value = headers['svc-route-mode'];
  if (value === undefined) return undefined;
  if (value === 'portable' || value === 'native') return value;
  throw new GatewayError(
    'invalid_request',
    `Svc-Route-Mode: must be portable or native, not ${JSON.stringify(value)}`,
    {
      param: 'svc-route-mode',
    },
  );
}

/** The Run a call is attached to (X-Svc-Run-ID), after checking the scopes that needs. */
export function attachedRun(caller: Caller, headers: IncomingHttpHeaders): string | null {
  requireScopes(caller, ['inference']);
  const header = headers['x-svc-run-id'];
  if (header === undefined) return null;
  requireScopes(caller, ['run:attach']);
  if (Array.isArray(header) || header === '') throw new GatewayError('run_not_found', 'Run not found.');
  return header;
}
