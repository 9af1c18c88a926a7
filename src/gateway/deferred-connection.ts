/**
 * Which connection serves POST /v1/batches and POST /v1/responses: the `Svc-Route` header names
 * it, else the configured default for the endpoint (endpoints.default_connections.batches |
 * .responses); with neither, 400 naming the header; an unknown name is 400 too. Also: the target of
 * a model alias on that one connection (upstream model id and price), else 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Connection, ModelTarget, Upstreams } from './connections.js';

export function selectConnection(
  headers: IncomingHttpHeaders,
  config: Config,
  upstreams: Upstreams,
  endpoint: 'batches' | 'responses',
): Connection {
  const header = headers['svc-route'];
  if (Array.isArray(header))
    throw new GatewayError('invalid_request', 'Svc-Route: send the header once.', { param: 'svc-route' });
  const name = header ?? config.endpoints.default_connections[endpoint];
  if (name === undefined || name === '') {
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: header required (no default connection is configured for ${endpoint}); name a configured connection.`,
      { param: 'svc-route' },
    );
  }
  const connection = upstreams.connections.get(name);
  if (!connection) {
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: no configured connection is named ${JSON.stringify(name)}.`,
      { param: 'svc-route' },
    );
  }
  return connection;
}

export function targetOn(
  upstreams: Upstreams,
  alias: string,
  connection: Connection,
  param: string,
): ModelTarget {
  const found = upstreams.aliases
    .get(alias)
    ?.targets.find((target) => target.connection.name === connection.name);
  if (!found) {
    throw new GatewayError(
      'invalid_request',
      `${param}: ${alias} is not a model alias with a target on connection ${connection.name}`,
      {
        param,
      },
    );
  }
  return found;
}
