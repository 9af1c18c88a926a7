/**
 * The matrix tests' gateway: one connection per creatable profile (named after the profile), one
 * model alias per connection (`m:<profile id>`, upstream model `up-<profile id>`), all priced at
 * PRICE, over an in-process simulator.
 *
 * This is the shape test/support/simulated-gateway.ts had when these tests were written; that file
 * was since repurposed for the experimental resources, so the matrix keeps its own copy rather than
 * depend on a file another area owns. Fold it back once test/support settles.
 */
import { PROFILES } from '../../src/catalogue/profiles.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

export const PRICE = {
  input_per_mtok_micros: 3_000_000,
  output_per_mtok_micros: 15_000_000,
  cache_write_per_mtok_micros: 3_750_000,
  cache_read_per_mtok_micros: 300_000,
  request_fee_micros: 0,
};

export interface MatrixGateway extends TestGateway {
  simulator: Simulator;
}

function baseUrlFor(simulatorUrl: string, profileId: string, primitive: string): string {
  const mantle = profileId.startsWith('cloudf.mantle') ? '/mantle' : '';
  return primitive === 'chat-completions' || primitive === 'responses'
    ? `${simulatorUrl}${mantle}/v1`
    : `${simulatorUrl}${mantle}`;
}

function upstreamConfig(simulatorUrl: string) {
  const creatable = PROFILES.filter((row) => row.availability === 'creatable');
  return {
    connections: creatable.map((row) => ({
      name: row.id,
      profile: row.id,
      base_url: baseUrlFor(simulatorUrl, row.id, row.primitive),
      auth: { scheme: 'none' },
      timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 2000 },
      provider_executed_tools: false,
      beta_tokens: row.forwardsBeta ? ['interleaved-thinking-2025-05-14'] : [],
    })),
    models: creatable.map((row) => ({
      alias: `m:${row.id}`,
      targets: [{ connection: row.id, model: `up-${row.id}`, price: PRICE }],
    })),
  };
}

export async function startMatrixGateway(): Promise<MatrixGateway> {
  const simulator = await startSimulator({ port: 0 });
  try {
    const gateway = await startTestGateway({ config: upstreamConfig(simulator.url) });
    return {
      ...gateway,
      simulator,
      async close() {
        await gateway.close();
        await simulator.close();
      },
    };
  } catch (error) {
    await simulator.close();
    throw error;
  }
}

/** Headers of a vendora Messages call with a Gateway Key. */
export function messagesHeaders(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json', ...extra };
}
