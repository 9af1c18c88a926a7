/**
 * Which connection serves an experimental resource request: the one `Svc-Route` names, else the
 * configured default for the endpoint (endpoints.default_connections), else 400 naming the header.
 * An unknown name is 400; a connection whose profile cannot serve the endpoint is 400 too.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { type ResourceEndpoint, servesResource } from '../catalogue/side-endpoints.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Connection, Upstreams } from './connections.js';

export type { ResourceEndpoint };

export function resolveConnection(
  upstreams: Upstreams,
  defaults: Readonly<Record<string, string>>,
  headers: IncomingHttpHeaders,
  endpoint: ResourceEndpoint,
): Connection {
  const header = headers['svc-route'];
  if (Array.isArray(header))
    throw new GatewayError('invalid_request', 'Svc-Route: send the header once.', { param: 'svc-route' });
  const name = header ?? defaults[endpoint];
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
      {
        param: 'svc-route',
      },
    );
  }
  if (!servesResource(connection.row, endpoint)) {
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: connection ${name} (profile ${connection.row.id}) does not serve ${endpoint}.`,
      { param: 'svc-route' },
    );
  }
  return connection;
}
