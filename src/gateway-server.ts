/**
 * Starts the whole gateway from a validated configuration: store, bootstrap, HTTP app, listener,
 * background work; and stops it gracefully (stop accepting, drain in-flight requests, close the
 * store) on close().
 *
 * The drain is bounded: a stream that is still open after `drainMs` (a long generation, a stalled
 * upstream) has its connection cut, so its attempt settles as the client-gone case (the whole
 * reservation committed, counted unknown) while the store is still open, instead of the process
 * hanging until the orchestrator's SIGKILL leaves the reservation to the lease reaper.
 */

import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { withSimulatorUrl } from './config/check.js';
import type { Config } from './config/schema.js';
import { buildUpstreams } from './gateway/connections.js';
import { type MetricsListener, startMetricsListener } from './http/metrics-routes.js';
import { type Clock, systemClock } from './lib/clock.js';
import { openObjectStore, readSealingKey } from './objects/open-objects.js';
import { combineObservers } from './observability/attempt-observer.js';
import { createObservability } from './observability/observability.js';
import { instrumentStore } from './observability/store-instrumentation.js';
import { refusalRecorder } from './reports/refusal-recorder.js';
import { startSimulator } from './simulator/server.js';
import { bootstrapStore, ensureQuickstartKey, QUICKSTART_KEY_ID } from './startup/bootstrap.js';
import { composeLedger } from './startup/compose.js';
import { HeldListener } from './startup/held-listener.js';
import { type OpenedLimiter, openLimiter } from './startup/open-limiter.js';
import { openStore } from './startup/open-store.js';
import type { Store } from './store/port.js';

export interface RunningGateway {
  app: FastifyInstance;
  store: Store;
  url: string;
  quickstartSecret?: string;
  /**
   * Takes the listening socket before close() (a reload to the same address): connections wait on
   * it for the next gateway instead of being refused (held-listener.ts).
   */
  holdListener(): Promise<HeldListener>;
  close(): Promise<void>;
}

/** Default bound on draining in-flight requests at shutdown (below Kubernetes' 30 s grace period). */
export const DEFAULT_DRAIN_MS = 10_000;

export interface StartOptions {
  config: Config;
  environment: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
  /** How long close() lets in-flight requests finish before cutting their connections. */
  drainMs?: number;
  /** The tracing SDK is running (main.ts started it): make spans. */
  tracing?: boolean;
  /** Listen on this held socket (the previous gateway's, at a reload) instead of binding the address. */
  listener?: HeldListener;
}

export async function startGateway(options: StartOptions): Promise<RunningGateway> {
  const { environment, logger } = options;
  const clock = options.clock ?? systemClock;
  const objects = openObjectStore(options.config, environment);
  let limits: OpenedLimiter | undefined;
  const simulator = options.config.simulator?.enabled
    ? await startSimulator({ port: options.config.simulator.port })
    : undefined;
  const config = simulator ? withSimulatorUrl(options.config, simulator.url) : options.config;
  const observability = createObservability({
    metrics: config.metrics.enabled,
    tracing: options.tracing ?? false,
  });
  const store = instrumentStore(
    await openStore(config, environment, { exclusive: true, logger }),
    observability,
  );
  let metricsListener: MetricsListener | undefined;
  const upstreams = buildUpstreams(config, environment);
  const ledger = composeLedger(
    store,
    clock,
    logger,
    config,
    combineObservers(observability.observer, refusalRecorder(store, clock, logger)),
  );
  try {
    const { revokedConfiguredKeys } = await bootstrapStore(store, config, environment);
    for (const id of revokedConfiguredKeys)
      logger.warn({ key: id }, 'configured Gateway Key is revoked in the store and stays revoked');
    const quickstart = config.quickstart
      ? await ensureQuickstartKey(store, config.quickstart.key_file, config.quickstart.project)
      : undefined;
    if (quickstart?.problem) logger.warn({ key: QUICKSTART_KEY_ID }, quickstart.problem);
    const quickstartSecret = quickstart?.secret;
    await ledger.startReaper(store.kind === 'sqlite');
    limits = await openLimiter(config, environment, store, logger, observability.metrics);
    const app = await buildApp({
      config,
      store,
      clock,
      logger,
      upstreams,
      ledger,
      objects,
      observability,
      limiter: limits.limiter,
      sealingKey: readSealingKey(config, environment),
    });
    if (observability.metrics && config.metrics.listen) {
      metricsListener = await startMetricsListener(observability.metrics, config.metrics.listen);
      logger.info({ url: `${metricsListener.url}/metrics` }, 'metrics listening');
    }
    const held = options.listener;
    const url = await app.listen({
      host: config.listen.host,
      port: config.listen.port,
      ...(held ? { handle: held.handle } : {}),
    });
    held?.deliver(app.server);
    logger.info({ url, store: store.kind }, 'gateway listening');
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      quickstartSecret,
      holdListener: () => HeldListener.take(app.server),
      close() {
        closing ??= (async () => {
          const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
          const deadline = setTimeout(() => {
            logger.warn(
              { drainMs },
              'in-flight requests still open after the drain period: closing their connections',
            );
            app.server.closeAllConnections();
          }, drainMs);
          try {
            await app.close();
          } finally {
            clearTimeout(deadline);
          }
          await ledger.inDoubt.drain();
          ledger.stopReaper();
          await metricsListener?.close();
          await limits?.close();
          await upstreams.close();
          await simulator?.close();
          await store.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await metricsListener?.close();
    ledger.stopReaper();
    await limits?.close();
    await upstreams.close();
    await simulator?.close();
    await store.close();
    throw error;
  }
}
