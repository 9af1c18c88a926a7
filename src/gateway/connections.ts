/**
 * Runtime connections and model aliases, built once from the configuration: one keep-alive undici
 * pool per connection, auth headers from environment variables through named schemes (x-api-key,
 * bearer, a named header, SigV4 via aws4), prices per alias target.
 */
import aws4 from 'aws4';
import { Pool } from 'undici';
import { findProfile, type ProfileRow } from '../catalogue/profiles.js';
import { type AuthConfig, type Config, type ConnectionConfig, messagesModels } from '../config/schema.js';
import { type Price, priceFromConfig } from '../money/pricing.js';
import type { UpstreamEndpoint } from '../primitives/shared/upstream-call.js';

export interface Connection extends UpstreamEndpoint {
  row: ProfileRow;
  providerExecutedTools: boolean;
  betaTokens: ReadonlySet<string>;
}

export interface ModelTarget {
  connection: Connection;
  upstreamModel: string;
  price: Price;
}

export interface ModelAlias {
  alias: string;
  targets: ModelTarget[];
  /** The output bound of a chat completion that gives none (`default_max_tokens`). */
  defaultMaxTokens: number;
}

export interface Upstreams {
  connections: ReadonlyMap<string, Connection>;
  aliases: ReadonlyMap<string, ModelAlias>;
  close(): Promise<void>;
}

type AuthHeaders = UpstreamEndpoint['authHeaders'];

function authHeaders(auth: AuthConfig, url: URL, environment: NodeJS.ProcessEnv): AuthHeaders {
  const secret = (name: string | undefined) => (name ? (environment[name] ?? '') : '');
  switch (auth.scheme) {
    case 'none':
      return () => ({});
    case 'x-api-key': {
      const value = secret(auth.secret_env);
      return () => ({ 'x-api-key': value });
    }
    case 'bearer': {
      const value = `Bearer ${secret(auth.secret_env)}`;
      return () => ({ authorization: value });
    }
    case 'header': {
      const header = (auth.header ?? '').toLowerCase();
      const value = secret(auth.secret_env);
      return () => ({ [header]: value });
    }
    case 'sigv4': {
      const credentials = {
        accessKeyId: secret(auth.access_key_id_env),
        secretAccessKey: secret(auth.secret_access_key_env),
        ...(auth.session_token_env ? { sessionToken: secret(auth.session_token_env) } : {}),
      };
      return (method, path, body, headers) => {
        const signed = aws4.sign(
          {
            host: url.host,
            path,
            method,
            service: auth.service,
            region: auth.region,
            body,
            headers: { ...headers },
          },
          credentials,
        );
        const result: Record<string, string> = {};
        for (const [name, value] of Object.entries(signed.headers ?? {})) {
          if (name.toLowerCase() !== 'host' && name.toLowerCase() !== 'content-length')
            result[name.toLowerCase()] = String(value);
        }
        return result;
      };
    }
    default: {
      const never: never = auth.scheme;
      throw new Error(`unknown auth scheme ${String(never)}`);
    }
  }
}

function buildConnection(config: ConnectionConfig, environment: NodeJS.ProcessEnv): Connection {
  const row = findProfile(config.profile);
  if (row?.availability !== 'creatable')
    throw new Error(`connection ${config.name}: profile ${config.profile} cannot be created`);
  const url = new URL(config.base_url);
  const dispatcher = new Pool(url.origin, {
    connections: config.max_connections,
    connect: { timeout: config.timeouts.connect_ms },
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  return {
    name: config.name,
    row,
    dispatcher,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ''),
    firstByteTimeoutMs: config.timeouts.first_byte_ms,
    idleTimeoutMs: config.timeouts.idle_ms,
    authHeaders: authHeaders(config.auth, url, environment),
    providerExecutedTools: config.provider_executed_tools,
    betaTokens: new Set(config.beta_tokens),
  };
}

export function buildUpstreams(config: Config, environment: NodeJS.ProcessEnv): Upstreams {
  const connections = new Map(
    config.connections.map((connection) => [connection.name, buildConnection(connection, environment)]),
  );
  const aliases = new Map(
    messagesModels(config).map((model) => [
      model.alias,
      {
        alias: model.alias,
        targets: model.targets.map((target) => ({
          connection: connections.get(target.connection)!,
          upstreamModel: target.model,
          price: priceFromConfig(target.price),
        })),
        defaultMaxTokens: model.default_max_tokens,
      },
    ]),
  );
  return {
    connections,
    aliases,
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.dispatcher.close()));
    },
  };
}
