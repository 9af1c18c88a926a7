/**
 * A test gateway for the experimental resources, wired to an in-process simulator: a
 * chat-embeddings connection `sim-chat` (files are uploaded upstream; media aliases serve speech,
 * transcriptions, images, moderations and embeddings there) and a vendora-wire connection `sim-vendora` (files are only
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

const media = (alias: string, endpoint: string, model: string, price: unknown) => ({
  alias,
  endpoint,
  targets: [{ connection: 'sim-chat', model, price }],
});

/**
 * Media aliases on sim-chat. The first five are named like the vendor models they stand for and
 * send that same id upstream (priced at SIM_PRICES); the last three send a different upstream model
 * at their own prices, so tests can tell whose model and price a call used.
 */
export const SIM_MEDIA_MODELS = [
  media('tts-1', 'audio.speech', 'tts-1', {
    per_million_characters_micros: SIM_PRICES.speech_per_million_characters_micros,
  }),
  media('whisper-1', 'audio.transcriptions', 'whisper-1', {
    per_minute_micros: SIM_PRICES.transcription_per_minute_micros,
    max_seconds: SIM_PRICES.transcription_max_seconds,
  }),
  media('gpt-image-1', 'images.generations', 'gpt-image-1', {
    per_image: [{ size: '1024x1024', micros: SIM_PRICES.image_micros }],
    default_size: '1024x1024',
  }),
  media('omni-moderation-latest', 'moderations', 'omni-moderation-latest', {
    per_request_micros: SIM_PRICES.moderation_request_micros,
  }),
  media('text-embedding-3-small', 'embeddings', 'text-embedding-3-small', { input_per_mtok_micros: 20_000 }),
  media('voice-hd', 'audio.speech', 'sim-tts-hd', { per_million_characters_micros: 30_000_000 }),
  media('ears-fast', 'audio.transcriptions', 'sim-whisper-fast', {
    per_second_micros: 250,
    max_seconds: 120,
  }),
  media('painter', 'images.generations', 'sim-image-2', {
    per_image: [
      { size: '1024x1024', quality: 'standard', micros: 40_000 },
      { size: '1024x1024', quality: 'hd', micros: 80_000 },
      { size: '1792x1024', quality: 'hd', micros: 120_000 },
    ],
    default_size: '1024x1024',
    default_quality: 'standard',
  }),
];

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
    config: (simUrl) => ({
      connections: simulatedConnections(simUrl),
      ...options.config,
      models: [...SIM_MEDIA_MODELS, ...((options.config?.models as unknown[] | undefined) ?? [])],
    }),
  });
}
