/**
 * The job worker: claims due jobs from the store with a lease, runs each with its kind's handler,
 * renews the lease while the handler works, and completes or reschedules the job by what the
 * handler answers. A job whose lease passes (this process died, or stalled past its lease) becomes
 * claimable again, on another replica or after a restart; handlers are written to be re-run.
 *
 * Steps per tick (every poll interval while running):
 *   claim while fewer than `concurrency` jobs run -> handler(job, signal) -> done | retry at T
 *   a handler that throws is retried with backoff (attempts x poll interval, at most 60 s).
 * Every time decision reads the injected clock; only the tick itself uses real timers.
 *
 * Sweeps (expired batches, reaped responses, orphaned objects) are recurring jobs of kind `sweep`,
 * one per name, enqueued by every replica at start (a no-op when the job exists) and claimed with
 * a lease like any job: one replica runs each pass, which reschedules itself `intervalMs` later.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { randomBase32 } from '../lib/ids.js';
import { tracer } from '../observability/tracing.js';
import type { JobKind, JobRecord, JobsRepository } from '../store/jobs-port.js';

export type JobOutcome = { kind: 'done' } | { kind: 'retry'; afterMs: number };

export interface JobContext {
  /** Fires when the worker stops or loses the lease. */
  signal: AbortSignal;
}

export type JobHandler = (job: JobRecord, context: JobContext) => Promise<JobOutcome>;

export interface WorkerSettings {
  pollIntervalMs: number;
  leaseMs: number;
  concurrency: number;
  /** SQLite: one process owns the file, so leases of a previous process are released at start. */
  reclaimOnStart: boolean;
}

export interface Sweep {
  /** The sweep job's resource id (stable across replicas and releases). */
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

export type JobHandlers = Record<Exclude<JobKind, 'sweep'>, JobHandler>;

export class JobWorker {
  readonly owner = `worker_${randomBase32(16)}`;
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Map<string, { promise: Promise<void>; abort: AbortController }>();
  private stopped = true;
  private ticking = false;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly handlers: JobHandlers,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly settings: WorkerSettings,
    private readonly sweeps: Sweep[] = [],
  ) {}

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    if (this.settings.reclaimOnStart) {
      const released = await this.jobs.releaseForeignLeases(this.owner);
      if (released > 0) this.logger.warn({ released }, 'resuming jobs left by a previous process');
    }
    const now = this.clock.now();
    for (const sweep of this.sweeps)
      await this.jobs.enqueue({ kind: 'sweep', resourceId: sweep.name, runAfter: now + sweep.intervalMs });
    this.schedule(0);
  }

  /** Stops claiming, aborts running handlers and waits for them to return. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const { abort } of this.running.values()) abort.abort();
    await Promise.allSettled([...this.running.values()].map((entry) => entry.promise));
  }

  /** Runs one claim round now (tests and the first tick). */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      while (!this.stopped && this.running.size < this.settings.concurrency) {
        const job = await this.jobs.claim({
          owner: this.owner,
          now: this.clock.now(),
          leaseMs: this.settings.leaseMs,
        });
        if (!job) break;
        this.launch(job);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'job claim failed; retrying at the next tick');
    } finally {
      this.ticking = false;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick().finally(() => this.schedule(this.settings.pollIntervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private launch(job: JobRecord): void {
    const abort = new AbortController();
    const promise = this.run(job, abort).finally(() => this.running.delete(job.id));
    this.running.set(job.id, { promise, abort });
  }

  private async run(job: JobRecord, abort: AbortController): Promise<void> {
    const renewEvery = Math.max(50, Math.floor(this.settings.leaseMs / 3));
    const renewal = setInterval(() => {
      this.jobs.renew(job.id, this.owner, this.clock.now() + this.settings.leaseMs).then(
        (held) => {
          if (!held) abort.abort();
        },
        (error: unknown) => this.logger.warn({ err: error, job: job.id }, 'lease renewal failed'),
      );
    }, renewEvery);
    renewal.unref();
    let outcome: JobOutcome;
    try {
      outcome =
        job.kind === 'sweep' ? await this.runSweep(job) : await this.runHandler(job, job.kind, abort.signal);
    } catch (error) {
      const backoff = Math.min(60_000, job.attempts * this.settings.pollIntervalMs);
      this.logger.warn({ err: error, job: job.id, attempts: job.attempts }, 'job failed; it will be retried');
      outcome = { kind: 'retry', afterMs: backoff };
    } finally {
      clearInterval(renewal);
    }
    if (this.stopped && abort.signal.aborted) return; // the lease passes and the job resumes later
    try {
      switch (outcome.kind) {
        case 'done':
          await this.jobs.complete(job.id, this.owner);
          break;
        case 'retry':
          await this.jobs.release(job.id, this.owner, this.clock.now() + outcome.afterMs);
          break;
        default: {
          const never: never = outcome;
          throw new Error(`unknown job outcome ${String(never)}`);
        }
      }
    } catch (error) {
      this.logger.warn({ err: error, job: job.id }, 'could not record the job outcome; its lease will pass');
    }
    // Something finished: look for more work without waiting for the next tick.
    if (!this.stopped) setImmediate(() => void this.tick());
  }

  /**
   * A batch or background response job, inside a root span (`svc.job <kind>`): its upstream calls
   * carry that span's `traceparent` and the lines it logs carry its trace and span ids, when tracing
   * is on (without an SDK the span is the API's no-op). Sweeps run untraced: one trace per pass
   * would be noise.
   */
  private runHandler(
    job: JobRecord,
    kind: Exclude<JobKind, 'sweep'>,
    signal: AbortSignal,
  ): Promise<JobOutcome> {
    const attributes = {
      'svc.job.id': job.id,
      'svc.job.kind': job.kind,
      'svc.job.resource_id': job.resourceId,
    };
    return tracer().startActiveSpan(
      `svc.job ${job.kind}`,
      { kind: SpanKind.INTERNAL, attributes },
      async (span) => {
        try {
          return await this.handlers[kind](job, { signal });
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  /** One pass of a sweep, then the same job again one interval later. */
  private async runSweep(job: JobRecord): Promise<JobOutcome> {
    const sweep = this.sweeps.find((candidate) => candidate.name === job.resourceId);
    // A sweep this replica does not know (an older or newer release): leave it to one that does.
    if (!sweep) return { kind: 'retry', afterMs: 60_000 };
    await sweep.run();
    return { kind: 'retry', afterMs: sweep.intervalMs };
  }
}
