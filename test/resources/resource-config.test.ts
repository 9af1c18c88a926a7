/** Start-up checks of the experimental resources: default connections, prices, sealing key. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openObjectStore } from '../../src/objects/open-objects.js';
import { baseConfig } from '../support/gateway.js';
import { simulatedConnections } from '../support/resource-gateway.js';

const ENV = { SIM_UPSTREAM_KEY: 'sk' };

function config(extra: Record<string, unknown>, environment: NodeJS.ProcessEnv = ENV) {
  return parseConfig(
    { ...baseConfig(), connections: simulatedConnections('http://127.0.0.1:1'), ...extra },
    'test.yaml',
    environment,
  );
}

describe('resource configuration', () => {
  it('accepts a files default connection that serves files', () => {
    expect(() => config({ endpoints: { default_connections: { files: 'sim-vendora' } } })).not.toThrow();
  });

  it('refuses a default connection whose profile cannot serve the endpoint', () => {
    const connections = [
      ...simulatedConnections('http://127.0.0.1:1'),
      {
        name: 'sim-responses',
        profile: 'vendorb.responses.v1',
        base_url: 'http://127.0.0.1:1/v1',
        auth: { scheme: 'none' },
      },
    ];
    expect(() =>
      config({ connections, endpoints: { default_connections: { files: 'sim-responses' } } }),
    ).toThrow(
      /default_connections\/files: connection "sim-responses" \(profile vendorb\.responses\.v1\) does not serve files/,
    );
  });

  it('refuses a default connection for a media endpoint (the model alias names the connection)', () => {
    expect(() => config({ endpoints: { default_connections: { 'audio.speech': 'sim-chat' } } })).toThrow(
      /default_connections\/audio\.speech: not used: the model alias of a audio\.speech request names its connection/,
    );
  });

  it('refuses a default connection for /v1/responses (served by the alias whatever its wire)', () => {
    expect(() => config({ endpoints: { default_connections: { responses: 'sim-responses' } } })).toThrow(
      /default_connections\/responses: not used: POST \/v1\/responses is served by its model alias's first target/,
    );
  });

  it('refuses to start with a missing or malformed sealing key, and needs one for sealed features', () => {
    const sealed = config({ objects: { sealing_key_env: 'SVC_SEALING_KEY' } });
    expect(() => openObjectStore(sealed, {})).toThrow(/SVC_SEALING_KEY is not set/);
    expect(() => openObjectStore(sealed, { SVC_SEALING_KEY: 'too-short' })).toThrow(/32 bytes/);
    expect(() =>
      openObjectStore(sealed, { SVC_SEALING_KEY: randomBytes(32).toString('base64') }).requireSealing(
        'deferred responses',
      ),
    ).not.toThrow();
    expect(() => openObjectStore(config({}), {}).requireSealing('deferred responses')).toThrow(
      /deferred responses.*sealing_key_env/,
    );
  });
});
