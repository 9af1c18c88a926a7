/**
 * A test gateway for batches and deferred responses, wired to an in-process simulator:
 * connections sim-vendora (vendora wire: message batches), sim-chat (chat wire: files + batches)
 * and sim-responses (responses wire); aliases `batch-model` (targets on sim-vendora and sim-chat),
 * `resp-model` and `resp-slow` (sim-responses). Prices: input 1 micro-USD per token, output 2, so
 * costs are easy to check. Jobs poll every few milliseconds; a sealing key is configured.
 */
import type { Clock } from '../../src/lib/clock.js';
import type { StoreKind } from './gateway.js';
import { type SimulatorWorld, startSimulatorWorld } from './simulator-world.js';

export const SEALING_KEY = 'a'.repeat(64);
const PRICE = { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 2_000_000 };

export type DeferredWorld = SimulatorWorld;

export interface DeferredWorldOptions {
  store?: StoreKind;
  clock?: Clock;
  config?: Record<string, unknown>;
  jobs?: Record<string, unknown>;
}

export function deferredConfig(simUrl: string): Record<string, unknown> {
  return {
    connections: [
      {
        name: 'sim-vendora',
        profile: 'vendora.messages.2023-06-01',
        base_url: simUrl,
        auth: { scheme: 'none' },
      },
      {
        name: 'sim-chat',
        profile: 'vendorb.chat-embeddings.v1',
        base_url: `${simUrl}/v1`,
        auth: { scheme: 'none' },
      },
      {
        name: 'sim-responses',
        profile: 'vendorb.responses.v1',
        base_url: `${simUrl}/v1`,
        auth: { scheme: 'none' },
      },
    ],
    models: [
      {
        alias: 'batch-model',
        targets: [
          { connection: 'sim-vendora', model: 'sim-messages-1', price: PRICE },
          { connection: 'sim-chat', model: 'sim-chat-1', price: PRICE },
        ],
      },
      { alias: 'resp-model', targets: [{ connection: 'sim-responses', model: 'sim-resp-1', price: PRICE }] },
      { alias: 'resp-slow', targets: [{ connection: 'sim-responses', model: 'sim-slow', price: PRICE }] },
    ],
    objects: { sealing_key_env: 'SVC_TEST_SEALING_KEY' },
  };
}

export function startDeferredWorld(options: DeferredWorldOptions = {}): Promise<DeferredWorld> {
  return startSimulatorWorld({
    store: options.store,
    clock: options.clock,
    environment: { SVC_TEST_SEALING_KEY: SEALING_KEY },
    config: (simUrl) => ({
      ...deferredConfig(simUrl),
      jobs: {
        poll_interval_ms: 10,
        batch_poll_interval_ms: 20,
        lease_ms: 2000,
        sweep_interval_ms: 50,
        ...options.jobs,
      },
      ...options.config,
    }),
  });
}

/** Polls `read` until `done` says so (real time; the jobs run on real timers). */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
