/**
 * What the request log keeps of the client request an attempt serves (docs/request-log.md): its
 * call id, tags, route and trace, taken at reservation (ledger.ts) from the request's record, or, for
 * a background job's fallback, from the failed attempt the log read back.
 */
import { newId } from '../lib/ids.js';
import type { RequestRecord } from '../observability/request-scope.js';
import type { AttemptAttribution } from '../store/port.js';
import type { LoggedAttempt } from '../store/request-log-port.js';

/**
 * The attribution of a background fallback: the attempt that failed before it (as the log read it
 * back) becomes the last of its route's tried targets; call, tags and trace carry over.
 */
export function attributionAfter(previous: LoggedAttempt, failure: string): AttemptAttribution {
  const route = previous.route ?? { index: 0, tried: [], skipped: [] };
  return {
    callId: previous.callId,
    tags: previous.tags,
    traceId: previous.traceId,
    route: {
      index: route.tried.length + 1,
      tried: [
        ...route.tried,
        {
          attempt_id: previous.attemptId,
          connection: previous.connection,
          outcome: previous.outcome ?? 'unknown',
          error: failure,
        },
      ],
      skipped: route.skipped,
    },
  };
}

/**
 * What the log keeps of the client request an attempt serves, as it stands when the attempt is
 * reserved: the request's call id (made by its first attempt), its tags, the targets routing
 * skipped and the attempts that failed before this one, and its trace.
 */
export function attributionOf(request: RequestRecord): AttemptAttribution {
  request.callId ??= newId('call');
  return {
    callId: request.callId,
    tags: request.tags,
    route: {
      index: request.routeTried.length,
      tried: [...request.routeTried],
      skipped: [...request.routeSkipped],
    },
    traceId: request.traceId,
  };
}
