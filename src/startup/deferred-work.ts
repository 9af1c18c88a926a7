/**
 * Batches and deferred responses: their routes and the job worker that runs them. The worker starts
 * when the app starts listening (the gateway server, end-to-end tests) and stops when the app
 * closes, before the store does; an app that is only built (inject tests) runs no background work.
 * Sweeps remove expired batches and reap deferred responses.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { BatchJob } from '../experimental/batches/job.js';
import { BatchService } from '../experimental/batches/service.js';
import { ResponseRunner } from '../experimental/responses/runner.js';
import { RunningCalls } from '../experimental/responses/running-calls.js';
import { ResponsesService } from '../experimental/responses/service.js';
import type { Upstreams } from '../gateway/connections.js';
import type { Authenticator } from '../http/auth.js';
import { registerBatchesRoutes } from '../http/batches-routes.js';
import { registerResponsesRoutes } from '../http/responses-routes.js';
import { JobWorker } from '../jobs/worker.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { LocalFolderObjectStore } from '../objects/local-folder.js';
import { objectsFolder } from '../objects/open-objects.js';
import type { ObjectStore } from '../objects/port.js';
import type { Store } from '../store/port.js';

export interface DeferredWorkDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  upstreams: Upstreams;
  ledger: Ledger;
  /** Default: the configured local folder (no sealing key: background responses are then refused). */
  objects?: ObjectStore;
  authenticator: Authenticator;
}

const DEFERRED_PATHS = /^\/v1\/(batches|responses)(\/|$|\?)/;

export function registerDeferredWork(app: FastifyInstance, options: DeferredWorkDeps): JobWorker {
  const deps = {
    ...options,
    objects: options.objects ?? new LocalFolderObjectStore({ root: objectsFolder(options.config) }),
  };
  const running = new RunningCalls();
  const responses = new ResponsesService({ ...deps, running });
  const runner = new ResponseRunner({ ...deps, running });
  const batches = new BatchService(deps);
  const batchJob = new BatchJob(deps);
  registerResponsesRoutes(app, { authenticator: deps.authenticator, responses });
  registerBatchesRoutes(app, { authenticator: deps.authenticator, batches });

  const jobs = deps.config.jobs;
  const worker = new JobWorker(
    deps.store.jobs,
    {
      batch: (job, context) => batchJob.run(job, context),
      response: (job, context) => runner.run(job, context),
    },
    deps.clock,
    deps.logger,
    {
      pollIntervalMs: jobs.poll_interval_ms,
      leaseMs: jobs.lease_ms,
      concurrency: jobs.concurrency,
      reclaimOnStart: deps.store.kind === 'sqlite',
    },
    [
      {
        name: 'deferred responses',
        intervalMs: jobs.sweep_interval_ms,
        run: async () => void (await responses.sweep()),
      },
      { name: 'batches', intervalMs: jobs.sweep_interval_ms, run: async () => void (await batches.sweep()) },
    ],
  );
  // A 409 on these resources is a state conflict: retrying the same call cannot succeed.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode === 409 && DEFERRED_PATHS.test(request.url)) reply.header('x-should-retry', 'false');
    return payload;
  });
  app.addHook('onListen', async () => {
    await worker.start();
  });
  app.addHook('onClose', async () => {
    await worker.stop();
  });
  return worker;
}
