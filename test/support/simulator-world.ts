/**
 * A test gateway whose upstreams are one in-process simulator: the simulator starts first (its URL
 * goes into the configuration), the gateway second; a gateway that fails to start closes the
 * simulator, and close() stops both.
 */
import OpenAI from 'openai';
import type { Clock } from '../../src/lib/clock.js';
import type { Observability } from '../../src/observability/observability.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { type StoreKind, startTestGateway, type TestGateway } from './gateway.js';

export interface SimulatorWorld {
  gateway: TestGateway;
  sim: Simulator;
  /** An official vendorb SDK client pointed at the gateway exactly as a user would. */
  client(key: string, headers?: Record<string, string>): OpenAI;
  close(): Promise<void>;
}

export interface SimulatorWorldOptions {
  store?: StoreKind | undefined;
  clock?: Clock | undefined;
  environment?: NodeJS.ProcessEnv;
  observability?: Observability;
  /** The gateway's raw configuration fields, given the simulator's URL. */
  config(simUrl: string): Record<string, unknown>;
}

export async function startSimulatorWorld(options: SimulatorWorldOptions): Promise<SimulatorWorld> {
  const sim = await startSimulator();
  let gateway: TestGateway;
  try {
    gateway = await startTestGateway({
      ...(options.store ? { store: options.store } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.environment ? { environment: options.environment } : {}),
      ...(options.observability ? { observability: options.observability } : {}),
      config: options.config(sim.url),
    });
  } catch (error) {
    await sim.close();
    throw error;
  }
  return {
    gateway,
    sim,
    client: (key, headers = {}) =>
      new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, defaultHeaders: headers, maxRetries: 0 }),
    async close() {
      await gateway.close();
      await sim.close();
    },
  };
}
