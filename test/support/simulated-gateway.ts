/**
 * A gateway wired to a simulated upstream: one connection per creatable profile (named after the
 * profile), one model alias per connection (`m:<profile id>`), and a `fallback` alias whose first
 * target is the direct vendora profile and second a chat-completions profile.
 */
import { PROFILES } from '../../src/catalogue/profiles.js';
import type { Simulator } from '../../src/simulator/server.js';
import type { StoreKind, TestGateway } from './gateway.js';
import { startSimulatorWorld } from './simulator-world.js';

export const PRICE = {
  input_per_mtok_micros: 3_000_000,
  output_per_mtok_micros: 15_000_000,
  cache_write_per_mtok_micros: 3_750_000,
  cache_read_per_mtok_micros: 300_000,
  request_fee_micros: 0,
};

export interface SimulatedGateway extends TestGateway {
  simulator: Simulator;
}

function baseUrlFor(simulatorUrl: string, profileId: string, primitive: string): string {
  const mantle = profileId.startsWith('cloudf.mantle') ? '/mantle' : '';
  switch (primitive) {
    case 'chat-completions':
    case 'responses':
      return `${simulatorUrl}${mantle}/v1`;
    default:
      return `${simulatorUrl}${mantle}`;
  }
}

export function simulatedUpstreamConfig(
  simulatorUrl: string,
  extra: { providerExecutedTools?: boolean; betaTokens?: string[] } = {},
) {
  const creatable = PROFILES.filter((row) => row.availability === 'creatable');
  const connections = creatable.map((row) => ({
    name: row.id,
    profile: row.id,
    base_url: baseUrlFor(simulatorUrl, row.id, row.primitive),
    auth: { scheme: 'none' },
    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 2000 },
    provider_executed_tools: extra.providerExecutedTools ?? false,
    beta_tokens: row.forwardsBeta ? (extra.betaTokens ?? ['interleaved-thinking-2025-05-14']) : [],
  }));
  const models = [
    ...creatable.map((row) => ({
      alias: `m:${row.id}`,
      targets: [{ connection: row.id, model: `up-${row.id}`, price: PRICE }],
    })),
    {
      alias: 'fallback',
      targets: [
        { connection: 'vendora.messages.2023-06-01', model: 'up-first', price: PRICE },
        { connection: 'compat.chat-embeddings.v1', model: 'up-second', price: PRICE },
      ],
    },
  ];
  return { connections, models };
}

export async function startSimulatedGateway(
  options: { store?: StoreKind; config?: Record<string, unknown>; providerExecutedTools?: boolean } = {},
): Promise<SimulatedGateway> {
  const world = await startSimulatorWorld({
    store: options.store,
    config: (simUrl) => ({
      ...simulatedUpstreamConfig(simUrl, { providerExecutedTools: options.providerExecutedTools }),
      ...options.config,
    }),
  });
  return { ...world.gateway, simulator: world.sim, close: world.close };
}

/** Headers of a vendora Messages call with a Gateway Key. */
export function messagesHeaders(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json', ...extra };
}
