/**
 * Records every refused reservation for the spend report's `refused_reservations`. It is an
 * AttemptObserver (ledger/attempt-observer.ts): the attempt runner calls `refused` when a
 * reservation is not admitted. Recording never throws into the request path; a failed write is
 * logged and the refusal is then missing from the report (the refusal itself already happened).
 */
import type { Logger } from 'pino';
import { type AttemptObserver, noAttemptObserver, type RefusalReason } from '../ledger/attempt-observer.js';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/port.js';

export function refusalRecorder(store: Store, clock: Clock, logger: Logger): AttemptObserver {
  return {
    ...noAttemptObserver,
    refused(labels, reason: RefusalReason) {
      store.reports
        .recordRefusal({
          projectId: labels.projectId,
          keyId: labels.keyId,
          runId: labels.runId,
          alias: labels.alias,
          connection: labels.connection ?? '',
          upstreamModel: labels.upstreamModel ?? '',
          reason,
          createdAt: new Date(clock.now()).toISOString(),
        })
        .catch((error: unknown) =>
          logger.warn({ err: error, reason }, 'could not record a refused reservation'),
        );
    },
  };
}
