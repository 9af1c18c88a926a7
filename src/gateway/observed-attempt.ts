/**
 * TEMPORARY WIRING (dropped at merge: the attempt runner of issue 9 calls the observer itself).
 * Reports today's ledger attempts to the AttemptObserver: reserve refusals, start, settlement.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type {
  AttemptLabels,
  AttemptObserver,
  AttemptWatch,
  RefusalReason,
  SettlementOutcome,
} from '../ledger/attempt-observer.js';
import type { Attempt, Settlement } from '../ledger/ledger.js';

const REFUSALS = new Set<string>(['run_budget_exceeded', 'run_not_active', 'run_not_found']);

export function reportRefusal(
  observer: AttemptObserver,
  labels: Parameters<AttemptObserver['refused']>[0],
  error: unknown,
): void {
  if (error instanceof GatewayError && REFUSALS.has(error.code))
    observer.refused(labels, error.code as RefusalReason);
  else observer.refused(labels, 'store_unavailable');
}

function classify(settlement: Settlement): { outcome: SettlementOutcome; errorType: string | null } {
  if (settlement.state === 'released') return { outcome: 'not_sent', errorType: 'connect' };
  if (settlement.state === 'settled') {
    const status = /^upstream_(\d+)$/.exec(settlement.outcome)?.[1];
    if (status === undefined) return { outcome: 'completed', errorType: null };
    return { outcome: 'refused_upstream', errorType: status === '429' ? 'http_429' : `http_${status[0]}xx` };
  }
  const byOutcome: Record<string, string> = {
    transport_timeout: 'timeout',
    transport_dropped: 'dropped',
    transport_aborted: 'client_gone',
    stream_aborted: 'client_gone',
  };
  return { outcome: 'unknown', errorType: byOutcome[settlement.outcome] ?? 'protocol' };
}

export function observeAttempt(
  observer: AttemptObserver,
  attempt: Attempt,
  labels: AttemptLabels,
): AttemptWatch {
  const watch = observer.started(attempt.id, labels, attempt.reservationMicrosUsd);
  const started = Date.now();
  const settle = attempt.settle.bind(attempt);
  attempt.settle = async (settlement: Settlement) => {
    await settle(settlement);
    const { outcome, errorType } = classify(settlement);
    watch.settled({
      outcome,
      errorType,
      costMicrosUsd: settlement.state === 'unknown' ? attempt.reservationMicrosUsd : settlement.costMicrosUsd,
      reservationMicrosUsd: attempt.reservationMicrosUsd,
      tokens: settlement.usage,
      httpStatus: settlement.httpStatus,
      responseModel: outcome === 'completed' ? labels.upstreamModel : null,
      durationMs: Date.now() - started,
    });
  };
  return watch;
}
