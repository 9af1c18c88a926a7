/**
 * Batches and deferred responses: their routes and the job worker that runs them. The worker starts
 * when the app starts listening (the gateway server, end-to-end tests) and stops when the app
 * closes, before the store does; an app that is only built (inject tests) runs no background work.
 * Sweeps remove expired batches, reap deferred responses and remove expired and orphaned objects;
 * each is a recurring job in the store, so one replica runs each pass (jobs/worker.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { BatchJob } from '../gateway/batches/job.js';
import { BatchService } from '../gateway/batches/service.js';
import type { Upstreams } from '../gateway/connections.js';
import { objectOwners } from '../gateway/object-owners.js';
import { ResponseRunner } from '../gateway/responses/runner.js';
import { RunningCalls } from '../gateway/responses/running-calls.js';
import { ResponsesService } from '../gateway/responses/service.js';
import type { Authenticator } from '../http/auth.js';
import { registerBatchesRoutes } from '../http/batches-routes.js';
import { registerResponsesRoutes } from '../http/responses-routes.js';
import { JobWorker, type Sweep } from '../jobs/worker.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { LocalFolderObjectStore } from '../objects/local-folder.js';
import { objectsFolder } from '../objects/open-objects.js';
import type { ObjectStore } from '../objects/port.js';
import { sweepObjects } from '../objects/sweep.js';
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

/** Expired files and orphaned objects (objects/sweep.ts), as one recurring job across replicas. */
function objectSweep(deps: DeferredWorkDeps & { objects: ObjectStore }): Sweep {
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
        name: 'responses',
        intervalMs: jobs.sweep_interval_ms,
        run: async () => void (await responses.sweep()),
      },
      { name: 'batches', intervalMs: jobs.sweep_interval_ms, run: async () => void (await batches.sweep()) },
      objectSweep(deps),
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
