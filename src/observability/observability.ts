/**
 * What the composition root hands the app: the metrics registry (when metrics are on), whether
 * tracing is on, and the AttemptObserver the attempt runner feeds. With everything off this is
 * `noObservability`: noAttemptObserver and no hooks doing more than the request log line.
 */

import { logWriteErrors } from '../lib/logger.js';
import { type AttemptObserver, noAttemptObserver } from './attempt-observer.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { GatewayMetrics } from './metrics.js';

export interface Observability {
  metrics: GatewayMetrics | undefined;
  tracing: boolean;
  observer: AttemptObserver;
}

export const noObservability: Observability = {
  metrics: undefined,
  tracing: false,
  observer: noAttemptObserver,
};

export function createObservability(options: { metrics: boolean; tracing: boolean }): Observability {
  const metrics = options.metrics ? new GatewayMetrics() : undefined;
  if (metrics) countLogWriteErrors(metrics);
  if (!metrics && !options.tracing)
    return { ...noObservability, observer: new AttemptRecorder({ metrics, tracing: false }) };
  return {
    metrics,
    tracing: options.tracing,
    observer: new AttemptRecorder({ metrics, tracing: options.tracing }),
  };
}

/** svc_log_write_errors_total follows the logger's own count of standard output's failures (read at scrape). */
function countLogWriteErrors(metrics: GatewayMetrics): void {
  const cell = metrics.counterCell('svc_log_write_errors_total', {});
  let counted = 0;
  metrics.beforeScrape(() => {
    const errors = logWriteErrors();
    cell.inc(errors - counted);
    counted = errors;
  });
}
