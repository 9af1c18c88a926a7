/**
 * The one Svc-Route parser, and the resolver of a resource's connection. `svcRoute` reads the header
 * (400 when sent twice) for every use case that honours it (files, batches, responses, the media
 * endpoints). Which connection serves a files or batches request: the one `Svc-Route` names, else the configured default for the endpoint (endpoints.default_connections), else 400
 * naming the header. An unknown name is 400; a connection whose profile cannot serve the endpoint
 * (catalogue/resource-profiles.ts) is 400 too.
 * Also: the target of a model alias on that one connection (upstream model id and price), else 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { type ResourceEndpoint, servesResource } from '../catalogue/resource-profiles.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Connection, ModelTarget, Upstreams } from './connections.js';

export type { ResourceEndpoint };

/** The connection name `Svc-Route` pins, or undefined when the header is absent; 400 when sent twice. */
export function svcRoute(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['svc-route'];
  if (Array.isArray(header))
    throw new GatewayError('invalid_request', 'Svc-Route: send the header once.', { param: 'svc-route' });
  return header;
}

/** The configured connection of that name; 400 naming `Svc-Route` when there is none. */
export function namedConnection(upstreams: Upstreams, name: string): Connection {
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
  return connection;
}

export function resolveConnection(
  upstreams: Upstreams,
  defaults: Readonly<Record<string, string>>,
  headers: IncomingHttpHeaders,
  endpoint: ResourceEndpoint,
): Connection {
  const name = svcRoute(headers) ?? defaults[endpoint];
  if (name === undefined || name === '') {
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: header required (no default connection is configured for ${endpoint}); name a configured connection.`,
      { param: 'svc-route' },
    );
  }
  const connection = namedConnection(upstreams, name);
  if (!servesResource(connection.row, endpoint)) {
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: connection ${name} (profile ${connection.row.id}) does not serve ${endpoint}.`,
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
      { param },
    );
  }
  return found;
}
