/**
 * Starts the whole gateway from a validated configuration: store, bootstrap, HTTP app, listener,
 * background work; and stops it gracefully (stop accepting, drain in-flight requests, close the
 * store) on close().
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { type Clock, systemClock } from '../lib/clock.js';
import type { Store } from '../store/port.js';
import { buildUpstreams } from '../gateway/connections.js';
import { Ledger } from '../ledger/ledger.js';
import { startSimulator } from '../simulator/server.js';
import { bootstrapStore, ensureQuickstartKey } from './bootstrap.js';
import { openStore } from './open-store.js';

export interface RunningGateway {
  app: FastifyInstance;
  store: Store;
  url: string;
  quickstartSecret?: string;
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  environment: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
}

export async function startGateway(options: StartOptions): Promise<RunningGateway> {
  const { config, environment, logger } = options;
  const clock = options.clock ?? systemClock;
  const simulator = config.simulator?.enabled ? await startSimulator({ port: config.simulator.port }) : undefined;
  const store = await openStore(config, environment);
  const upstreams = buildUpstreams(config, environment);
  const ledger = new Ledger(store, clock, logger, {
    leaseMs: config.ledger.lease_seconds * 1000,
    reaperIntervalMs: config.ledger.reaper_interval_seconds * 1000,
  });
  try {
    await bootstrapStore(store, config, environment);
    const quickstartSecret = config.quickstart
      ? await ensureQuickstartKey(store, config.quickstart.key_file, config.quickstart.project)
      : undefined;
    await ledger.startReaper(store.kind === 'sqlite');
    const app = await buildApp({ config, store, clock, logger, upstreams, ledger });
    const url = await app.listen({ host: config.listen.host, port: config.listen.port });
    logger.info({ url, store: store.kind }, 'gateway listening');
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      quickstartSecret,
      close() {
        closing ??= (async () => {
          await app.close();
          ledger.stopReaper();
          await upstreams.close();
          await simulator?.close();
          await store.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    ledger.stopReaper();
    await upstreams.close();
    await simulator?.close();
    await store.close();
    throw error;
  }
}
