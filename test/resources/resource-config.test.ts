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
  it('accepts priced default connections that serve their endpoints', () => {
    expect(() =>
      config({
        endpoints: {
          default_connections: { files: 'sim-vendora', 'audio.speech': 'sim-chat', moderations: 'sim-chat' },
        },
      }),
    ).not.toThrow();
  });

  it('refuses a default connection whose profile cannot serve the endpoint', () => {
    expect(() =>
      config({ endpoints: { default_connections: { 'images.generations': 'sim-vendora' } } }),
    ).toThrow(
      /default_connections\/images\.generations: connection "sim-vendora" \(profile vendora\.messages\.2023-06-01\) does not serve/,
    );
  });

  it('refuses an unpriced default connection', () => {
    const connections = simulatedConnections('http://127.0.0.1:1') as Array<Record<string, unknown>>;
    connections[0] = { ...connections[0], resource_prices: { image_micros: 1 } };
    expect(() =>
      config({ connections, endpoints: { default_connections: { 'audio.speech': 'sim-chat' } } }),
    ).toThrow(/needs resource_prices\.speech_per_million_characters_micros/);
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
