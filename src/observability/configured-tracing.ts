/**
 * Starts the tracing SDK when the configuration names an endpoint; loads nothing otherwise.
 * Used by main.ts (and the observability benchmark, which starts the gateway the same way).
 */
import type { Config } from '../config/schema.js';
import type { RunningTracing } from './tracing-sdk.js';

export async function startConfiguredTracing(config: Config): Promise<RunningTracing | undefined> {
  if (!config.tracing.endpoint) return undefined;
  const { startTracing } = await import('./tracing-sdk.js');
  return startTracing({
    endpoint: config.tracing.endpoint,
    serviceName: config.tracing.service_name,
    sampleRatio: config.tracing.sample_ratio,
  });
}
