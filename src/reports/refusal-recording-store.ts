/**
 * Until the attempt runner reports refusals to an AttemptObserver (refusal-recorder.ts), the ledger's
 * store is wrapped so that a reservation refused by a rule (run_budget_exceeded, run_not_active,
 * run_not_found) is recorded for the spend report's `refused_reservations`. Only `reserve` is
 * intercepted; every other member is the store's own. Drop this wrapper once the runner calls
 * `AttemptObserver.refused` (then wire refusalRecorder into its observers instead).
 */
import type { Logger } from 'pino';
import { GatewayError } from '../errors/gateway-error.js';
import type { RefusalReason } from '../ledger/attempt-observer.js';
import type { Clock } from '../lib/clock.js';
import type { ReserveInput, Store } from '../store/port.js';
import { refusalRecorder } from './refusal-recorder.js';

const RECORDED: ReadonlySet<string> = new Set<RefusalReason>([
  'run_budget_exceeded',
  'run_not_active',
  'run_not_found',
]);

export function recordingRefusals(store: Store, clock: Clock, logger: Logger): Store {
  const recorder = refusalRecorder(store, clock, logger);
  const reserve = async (input: ReserveInput) => {
    try {
      await store.reserve(input);
    } catch (error) {
      if (error instanceof GatewayError && RECORDED.has(error.code)) {
        recorder.refused(
          {
            projectId: input.projectId,
            keyId: input.keyId,
            runId: input.runId,
            endpoint: input.endpoint,
            alias: input.alias,
            connection: input.connection,
            profile: input.profile,
            upstreamModel: input.upstreamModel,
            streamed: false,
          },
          error.code as RefusalReason,
        );
      }
      throw error;
    }
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'reserve') return reserve;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
