/**
 * Records every refused reservation for the spend report's `refused_reservations`. It is an
 * AttemptObserver (observability/attempt-observer.ts): the attempt runner calls `refused` when a
 * reservation is not admitted. The refusals of one turn of the event loop are written together,
 * in one store write, after the turn: a flood of refused calls (a client retrying into an
 * exhausted budget or a rate limit) costs one write per turn, not one commit per refusal, and the
 * refusal's answer never waits for it. Recording never throws into the request path; a failed
 * write is logged and those refusals are then missing from the report (the refusals themselves
 * already happened).
 */
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import {
  type AttemptObserver,
  noAttemptObserver,
  type RefusalReason,
} from '../observability/attempt-observer.js';
import type { Store } from '../store/port.js';
import type { RefusalRecord } from '../store/reports-port.js';

export function refusalRecorder(store: Store, clock: Clock, logger: Logger): AttemptObserver {
  let pending: RefusalRecord[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    store.reports
      .recordRefusals(batch)
      .catch((error: unknown) =>
        logger.warn({ err: error, refusals: batch.length }, 'could not record refused reservations'),
      );
  };
  return {
    ...noAttemptObserver,
    refused(labels, reason: RefusalReason) {
      if (pending.length === 0) setImmediate(flush);
      pending.push({
        projectId: labels.projectId,
        keyId: labels.keyId,
        runId: labels.runId,
        alias: labels.alias,
        connection: labels.connection ?? '',
        upstreamModel: labels.upstreamModel ?? '',
        reason,
        createdAt: new Date(clock.now()).toISOString(),
      });
    },
  };
}
