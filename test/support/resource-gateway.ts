/**
 * A test gateway for the experimental resources, wired to an in-process simulator: a
 * chat-embeddings connection `sim-chat` (files are uploaded upstream; speech, transcriptions,
 * images and moderations are priced) and a vendora-wire connection `sim-vendora` (files are only
 * stored). Prices are small round numbers so tests can assert exact ledger costs.
 */
import type { Clock } from '../../src/lib/clock.js';
import type { StoreKind } from './gateway.js';
import { type SimulatorWorld, startSimulatorWorld } from './simulator-world.js';

export const SIM_PRICES = {
  speech_per_million_characters_micros: 15_000_000,
  transcription_per_minute_micros: 6_000,
  transcription_max_seconds: 600,
  image_micros: 40_000,
  moderation_request_micros: 100,
};

export type ResourceGateway = SimulatorWorld;

export interface ResourceGatewayOptions {
  store?: StoreKind;
  /** Merged over the simulated configuration (top-level keys replaced). */
  config?: Record<string, unknown>;
  clock?: Clock;
}

export function simulatedConnections(simUrl: string): unknown[] {
  return [
    {
      name: 'sim-chat',
      profile: 'vendorb.chat-embeddings.v1',
      base_url: `${simUrl}/v1`,
      auth: { scheme: 'bearer', secret_env: 'SIM_UPSTREAM_KEY' },
      resource_prices: SIM_PRICES,
    },
    {
      name: 'sim-vendora',
      profile: 'vendora.messages.2023-06-01',
      base_url: simUrl,
      auth: { scheme: 'x-api-key', secret_env: 'SIM_UPSTREAM_KEY' },
    },
  ];
}

export function startResourceGateway(options: ResourceGatewayOptions = {}): Promise<ResourceGateway> {
  return startSimulatorWorld({
    store: options.store,
    clock: options.clock,
    environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
    config: (simUrl) => ({ connections: simulatedConnections(simUrl), ...options.config }),
  });
}
