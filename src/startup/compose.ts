/**
 * The composition module: every use-case service, the job worker and the object-sweep owners are
 * built here, once, from the process's infrastructure (configuration, store port, clock, logger,
 * upstream connections, ledger, object store). app.ts only registers routes on what this returns;
 * http/ never builds a service nor imports an adapter.
 */

import type { Logger } from 'pino';
import { CapturePolicy } from '../capture/capture-policy.js';
import { CaptureReader } from '../capture/capture-reader.js';
import { captureSweepOwner } from '../capture/capture-sweep.js';
import { CaptureWriter } from '../capture/capture-writer.js';
import type { Config } from '../config/schema.js';
import { sweepEvents } from '../events/sweep.js';
import { BatchJob } from '../experimental/batches/job.js';
import { BatchService } from '../experimental/batches/service.js';
import { FilesService } from '../experimental/files/files-service.js';
import { MediaService } from '../experimental/media/media-service.js';
import { ResponseRunner } from '../experimental/responses/runner.js';
import { RunningCalls } from '../experimental/responses/running-calls.js';
import { ResponsesService } from '../experimental/responses/service.js';
import { ChatCompletionsService } from '../gateway/chat-completions/chat-service.js';
import type { Upstreams } from '../gateway/connections.js';
import { CountTokensService } from '../gateway/messages/count-tokens-service.js';
import { MessagesService } from '../gateway/messages/messages-service.js';
import { ModelsCatalogue } from '../gateway/models/list-models.js';
import { KeysService } from '../governance/keys-service.js';
import { RateLimiter } from '../governance/rate-limit.js';
import { GovernanceService } from '../governance/service.js';
import { Authenticator } from '../http/auth.js';
import { JobWorker, type Sweep } from '../jobs/worker.js';
import { AttemptRunner } from '../ledger/attempt-runner.js';
import { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { InferenceRateLimits } from '../limits/inference-limits.js';
import type { Limiter } from '../limits/limiter.js';
import { configuredLimitsSource } from '../limits/limits-source.js';
import { projectCapsFrom } from '../money/spend-caps.js';
import { eventThresholdsFrom } from '../money/thresholds.js';
import { LocalFolderObjectStore } from '../objects/local-folder.js';
import { objectsFolder } from '../objects/open-objects.js';
import type { ObjectStore } from '../objects/port.js';
import { type ObjectOwner, sweepObjects } from '../objects/sweep.js';
import { type AttemptObserver, noAttemptObserver } from '../observability/attempt-observer.js';
import type { Observability } from '../observability/observability.js';
import type { Store } from '../store/port.js';
import { DeliveryClient } from '../webhooks/delivery-client.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { EndpointsService } from '../webhooks/endpoints-service.js';
import { SecretBox } from '../webhooks/secret-box.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  upstreams: Upstreams;
  ledger: Ledger;
  /** Private object store (files, spools, sealed objects); default: the local folder of the configuration. */
  objects?: ObjectStore;
  /** Metrics, tracing and the attempt observer; default: none (noAttemptObserver). */
  observability?: Observability;
  /** Shared token buckets; default: the store's (limits/limiter.ts). */
  limiter?: Limiter;
  /** Built web console (npm run build); default: dist/console. */
  consoleDir?: string;
  /** The sealing key (objects.sealing_key_env / _file): webhook secrets are sealed with it when present. */
  sealingKey?: Buffer | undefined;
}

export interface Services {
  authenticator: Authenticator;
  governance: GovernanceService;
  rateLimiter: RateLimiter;
  keys: KeysService;
  messages: MessagesService;
  chat: ChatCompletionsService;
  countTokens: CountTokensService;
  files: FilesService;
  media: MediaService;
  responses: ResponsesService;
  batches: BatchService;
  models: ModelsCatalogue;
  /** Body capture (capture/): who captures, the background writer, and the reader of the API. */
  captures: Captures;
  /** Runs batches and deferred responses; started when the app listens, stopped when it closes. */
  worker: JobWorker;
  /** Webhook endpoints and deliveries over /svc/v1/webhook-endpoints. */
  webhooks: EndpointsService;
  /** Delivers webhooks; started when the app listens, stopped when it closes. */
  dispatcher: WebhookDispatcher;
}

export interface Captures {
  policy: CapturePolicy;
  writer: CaptureWriter;
  reader: CaptureReader;
}

/**
 * Body capture: a Project that captures needs sealed objects, so without a sealing key the gateway
 * refuses to start (requireSealing throws naming objects.sealing_key_env). Drops and writes are
 * counted in svc_capture_dropped_total and svc_captures_written_total when metrics are on.
 */
function composeCaptures(deps: AppDeps & { objects: ObjectStore }): Captures {
  const policy = new CapturePolicy(deps.config.projects);
  if (policy.anyEnabled) deps.objects.requireSealing('body capture (projects[].capture.enabled)');
  const metrics = deps.observability?.metrics;
  const written = metrics?.counterCell('svc_captures_written_total', {});
  const dropped = metrics?.counter('svc_capture_dropped_total');
  const writer = new CaptureWriter({
    objects: deps.objects,
    logger: deps.logger,
    ...(written ? { onWritten: () => written.inc() } : {}),
    ...(dropped ? { onDropped: (reason) => dropped.inc({ reason }) } : {}),
  });
  return { policy, writer, reader: new CaptureReader({ objects: deps.objects, policy, clock: deps.clock }) };
}

/** The ledger of a process: reservations, settlements and the lease reaper over the store. */
export function composeLedger(
  store: Store,
  clock: Clock,
  logger: Logger,
  config: Config,
  observer: AttemptObserver = noAttemptObserver,
): Ledger {
  return new Ledger(
    store,
    clock,
    logger,
    {
      leaseMs: config.ledger.lease_seconds * 1000,
      reaperIntervalMs: config.ledger.reaper_interval_seconds * 1000,
      projectCaps: projectCapsFrom(config.projects),
      eventThresholds: eventThresholdsFrom(config.events, config.projects),
    },
    observer,
  );
}

/**
 * Expired files and orphaned objects (objects/sweep.ts), as one recurring job in the store, so one
 * replica runs each pass (jobs/worker.ts).
 */
function objectSweep(deps: AppDeps & { objects: ObjectStore }): Sweep {
  return {
    name: 'objects',
    intervalMs: deps.config.objects.sweep_interval_seconds * 1000,
    run: async () => {
      const result = await sweepObjects({
        objects: deps.objects,
        owners: objectOwners(deps),
        nowMs: deps.clock.now(),
        graceMs: deps.config.objects.orphan_grace_seconds * 1000,
      });
      if (result.staleParts + result.expired + result.orphans > 0)
        deps.logger.info({ ...result }, 'object sweep removed objects');
    },
  };
}

/**
 * PostgreSQL's hourly report rollups folded in the background (store/postgres/report-fold.ts), as
 * one recurring job in the store, so one replica folds each pass and a report read after an
 * upgrade or a burst folds at most one interval of traffic itself. The SQLite store folds its own
 * every second (store/sqlite/report-fold.ts): no sweep.
 */
function reportFoldSweep(deps: { config: Config; store: Store }): Sweep[] {
  if (deps.store.kind !== 'postgres') return [];
  return [
    {
      name: 'report-fold',
      intervalMs: deps.config.reports.fold_interval_seconds * 1000,
      run: () => deps.store.reports.fold(),
    },
  ];
}

/** The webhook dispatcher of a process (webhooks/dispatcher.ts), from webhooks.* settings. */
function composeDispatcher(deps: AppDeps, secrets: SecretBox): WebhookDispatcher {
  const settings = deps.config.webhooks;
  return new WebhookDispatcher({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    secrets,
    client: new DeliveryClient({
      timeoutMs: settings.timeout_ms,
      allowPrivateNetworks: settings.allow_private_networks,
    }),
    metrics: deps.observability?.metrics,
    settings: {
      pollIntervalMs: settings.poll_interval_ms,
      timeoutMs: settings.timeout_ms,
      retryWindowMs: settings.retry_window_seconds * 1000,
      backoff: { baseMs: settings.backoff_base_ms, capMs: settings.backoff_cap_ms },
      maxPerEndpoint: settings.max_concurrent_per_endpoint,
      maxConcurrent: settings.max_concurrent_deliveries,
      attemptHistory: settings.attempt_history,
    },
  });
}

/** Terminal webhook deliveries of events that retention removed (store/webhooks-port.ts). */
function webhookSweep(deps: { config: Config; store: Store }): Sweep {
  return {
    name: 'webhook-deliveries',
    intervalMs: deps.config.jobs.sweep_interval_ms,
    run: async () => {
      while ((await deps.store.webhooks.pruneDeliveries(1000)) === 1000);
    },
  };
}

export function composeServices(appDeps: AppDeps): Services {
  const base = {
    ...appDeps,
    objects: appDeps.objects ?? new LocalFolderObjectStore({ root: objectsFolder(appDeps.config) }),
  };
  const rateLimits = new InferenceRateLimits(
    appDeps.limiter ?? appDeps.store.rateBuckets,
    appDeps.clock,
    configuredLimitsSource(appDeps.config, appDeps.store, appDeps.clock),
  );
  const captures = composeCaptures(base);
  const runner = new AttemptRunner(appDeps.ledger, rateLimits);
  const deps = { ...base, runner };
  const { config, store, clock, upstreams, ledger } = deps;
  const running = new RunningCalls();
  const messages = new MessagesService({ config, upstreams, runner });
  const responses = new ResponsesService({ ...deps, running, messages });
  const responseRunner = new ResponseRunner({ ...deps, running, messages });
  const batches = new BatchService(deps);
  const batchJob = new BatchJob(deps);
  const jobs = config.jobs;
  const worker = new JobWorker(
    store.jobs,
    {
      batch: (job, context) => batchJob.run(job, context),
      response: (job, context) => responseRunner.run(job, context),
    },
    clock,
    deps.logger,
    {
      pollIntervalMs: jobs.poll_interval_ms,
      leaseMs: jobs.lease_ms,
      concurrency: jobs.concurrency,
      reclaimOnStart: store.kind === 'sqlite',
    },
    [
      {
        name: 'responses',
        intervalMs: jobs.sweep_interval_ms,
        run: async () => void (await responses.sweep()),
      },
      { name: 'batches', intervalMs: jobs.sweep_interval_ms, run: async () => void (await batches.sweep()) },
      objectSweep(deps),
      webhookSweep(deps),
      ...reportFoldSweep(deps),
      {
        name: 'events',
        intervalMs: config.events.sweep_interval_seconds * 1000,
        run: async () =>
          void (await sweepEvents(store, clock, deps.logger, {
            retentionDays: config.events.retention_days,
          })),
      },
    ],
  );
  const authenticator = new Authenticator(store, clock, config.auth.key_cache_ms);
  const secrets = new SecretBox(appDeps.sealingKey);
  return {
    authenticator,
    governance: new GovernanceService({
      store,
      clock,
      config,
      pendingFor: (runId) => ledger.pendingFor(runId),
    }),
    rateLimiter: new RateLimiter(appDeps.limiter ?? store.rateBuckets, clock),
    keys: new KeysService({ store, clock, config, onRevoked: (keyId) => authenticator.forget(keyId) }),
    messages,
    chat: new ChatCompletionsService({ messages, clock }),
    countTokens: new CountTokensService(upstreams, config, runner),
    files: new FilesService({ config, store, objects: deps.objects, upstreams, clock }),
    media: new MediaService({ config, upstreams, runner, objects: deps.objects }),
    responses,
    batches,
    models: new ModelsCatalogue(config, clock.now()),
    captures,
    worker,
    webhooks: new EndpointsService({ store, clock, config, secrets }),
    dispatcher: composeDispatcher(appDeps, secrets),
  };
}

/** Every feature that keeps objects, as sweep owners (objects/sweep.ts). Add a feature's owner here. */
export function objectOwners(deps: {
  config: Config;
  store: Store;
  objects: ObjectStore;
  upstreams: Upstreams;
  clock: Clock;
}): ObjectOwner[] {
  return [
    new FilesService(deps).sweepOwner(),
    MediaService.sweepOwner(),
    captureSweepOwner(new CapturePolicy(deps.config.projects)),
  ];
}
