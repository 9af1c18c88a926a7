/**
 * Instruments the store at its port: a decorator around the Store object built by the composition
 * root, never a change to an adapter's transaction code. Every port operation is one transaction
 * (STYLE.md), so timing each call times each transaction, including the wait for a pooled
 * connection. Inside a traced request each call is also a span. Job transitions (enqueue, claim,
 * complete, release) are counted here too, since every background job moves through this port.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Store } from '../store/port.js';
import type { GatewayMetrics } from './metrics.js';
import { activeSpan, context, startSpan } from './tracing.js';

/** Read-only figures of one connection pool an adapter may expose (PostgreSQL does: `main`, `settle`). */
export interface PoolStats {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

interface HasPoolStats {
  poolStats(): PoolStats[];
}

const SUB_PORTS = ['files', 'jobs', 'batches', 'deferredResponses'] as const;

export interface StoreInstrumentation {
  metrics: GatewayMetrics | undefined;
  tracing: boolean;
}

export function instrumentStore(store: Store, options: StoreInstrumentation): Store {
  if (!options.metrics && !options.tracing) return store;
  const system = store.kind === 'postgres' ? 'postgresql' : 'sqlite';
  const metrics = options.metrics;
  if (metrics && hasPoolStats(store)) {
    const gauge = metrics.gauge('svc_store_pool_connections');
    metrics.beforeScrape(() => {
      for (const stats of store.poolStats()) {
        const pool = metrics.bounded('pool', stats.pool);
        gauge.set({ pool, state: 'total' }, stats.total);
        gauge.set({ pool, state: 'idle' }, stats.idle);
        gauge.set({ pool, state: 'waiting' }, stats.waiting);
        gauge.set({ pool, state: 'max' }, stats.max);
      }
    });
  }
  const subPorts = new Map<string, unknown>();
  for (const name of SUB_PORTS) {
    if (typeof store[name] !== 'object' || store[name] === null) continue;
    subPorts.set(
      name,
      wrap(
        store[name] as unknown as object,
        `${name}.`,
        system,
        options,
        name === 'jobs' ? jobCounter(metrics) : resourceJobCounter(name, metrics),
      ),
    );
  }
  return wrap(store, '', system, options, undefined, subPorts) as Store;
}

type AfterCall = (operation: string, args: unknown[], result: unknown) => void;

function wrap<T extends object>(
  target: T,
  prefix: string,
  system: string,
  options: StoreInstrumentation,
  after: AfterCall | undefined,
  children?: Map<string, unknown>,
): T {
  const wrappers = new Map<PropertyKey, unknown>();
  const metrics = options.metrics;
  return new Proxy(target, {
    get(object, property) {
      const child = typeof property === 'string' ? children?.get(property) : undefined;
      if (child !== undefined) return child;
      const value = Reflect.get(object, property, object);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor')
        return value;
      let wrapper = wrappers.get(property);
      if (!wrapper) {
        wrapper = timed(
          object,
          value as (...args: unknown[]) => unknown,
          `${prefix}${property}`,
          system,
          options.tracing,
          metrics,
          after,
        );
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}

function timed(
  object: object,
  method: (...args: unknown[]) => unknown,
  operation: string,
  system: string,
  tracing: boolean,
  metrics: GatewayMetrics | undefined,
  after: AfterCall | undefined,
) {
  const duration = 'svc_store_transaction_duration_seconds';
  const ok = metrics?.histogramCell(duration, { operation, result: 'ok' });
  const failed = metrics?.histogramCell(duration, { operation, result: 'error' });
  return (...args: unknown[]) => {
    const started = performance.now();
    // Store spans only inside a traced request: the reaper's and sweeper's periodic calls would
    // otherwise each open a root trace.
    const span =
      tracing && activeSpan()
        ? startSpan(
            `svc.store ${operation}`,
            SpanKind.CLIENT,
            { 'db.system.name': system, 'db.operation.name': operation },
            context.active(),
          )
        : undefined;
    const finish = (error: unknown, result: unknown) => {
      (error === undefined ? ok : failed)?.observe((performance.now() - started) / 1000);
      if (span) {
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      if (error === undefined) after?.(operation, args, result);
    };
    let result: unknown;
    try {
      result = method.apply(object, args);
    } catch (error) {
      finish(error, undefined);
      throw error;
    }
    if (result instanceof Promise)
      return result.then(
        (value) => {
          finish(undefined, value);
          return value;
        },
        (error: unknown) => {
          finish(error ?? new Error('rejected'), undefined);
          throw error;
        },
      );
    finish(undefined, result);
    return result;
  };
}

function jobCounter(metrics: GatewayMetrics | undefined): AfterCall | undefined {
  if (!metrics) return undefined;
  const transitions = metrics.counter('svc_background_jobs_total');
  const running = metrics.gauge('svc_background_jobs_running');
  const kindOfId = (id: unknown) => metrics.bounded('job_kind', String(id).split(':')[0] ?? '');
  return (operation, args, result) => {
    switch (operation) {
      case 'jobs.enqueue':
        transitions.inc({
          kind: metrics.bounded('job_kind', String((args[0] as { kind: string }).kind)),
          state: 'enqueued',
        });
        return;
      case 'jobs.claim': {
        if (!result) return;
        const kind = metrics.bounded('job_kind', String((result as { kind: string }).kind));
        transitions.inc({ kind, state: 'claimed' });
        running.inc({ kind });
        return;
      }
      case 'jobs.complete':
      case 'jobs.release': {
        if (result !== true) return;
        const kind = kindOfId(args[0]);
        transitions.inc({ kind, state: operation === 'jobs.complete' ? 'completed' : 'released' });
        running.dec({ kind });
        return;
      }
      default:
        return;
    }
  };
}

/**
 * Batches and deferred responses insert their job in the same transaction as their record (not
 * through jobs.enqueue): a create that stored a new record enqueued a `batch` or `response` job.
 */
function resourceJobCounter(port: string, metrics: GatewayMetrics | undefined): AfterCall | undefined {
  if (!metrics) return undefined;
  const kind = port === 'batches' ? 'batch' : port === 'deferredResponses' ? 'response' : undefined;
  if (kind === undefined) return undefined;
  const enqueued = metrics.counterCell('svc_background_jobs_total', { kind, state: 'enqueued' });
  return (operation, _args, result) => {
    if (operation !== `${port}.create`) return;
    // batches.create answers an idempotent result: a replay stored nothing.
    if ((result as { replayed?: boolean } | undefined)?.replayed === true) return;
    enqueued.inc();
  };
}

function hasPoolStats(store: Store): store is Store & HasPoolStats {
  return typeof (store as Partial<HasPoolStats>).poolStats === 'function';
}
