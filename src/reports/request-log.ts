/**
 * The request log (GET /svc/v1/attempts, GET /svc/v1/attempts/{id}; docs/request-log.md): every
 * attempt of the caller's Project, with or without a Run, settled or still open, newest first by
 * (created_at, attempt id) with an opaque keyset cursor (`after`, from `next_cursor`), and one
 * attempt's detail. Another Project's attempt answers 404 like an unknown id.
 */
import type { CaptureStatus } from '../capture/capture-reader.js';
import { GatewayError } from '../errors/gateway-error.js';
import { attributeFilters } from '../governance/attributes.js';
import type { Caller } from '../governance/service.js';
import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';
import type { Store } from '../store/port.js';
import type { AttemptLogQuery, LoggedAttempt } from '../store/request-log-port.js';
import { encodeCursor } from './cursor.js';
import { badParameter, Params, type Query } from './params.js';

const FILTERS = [
  'limit',
  'after',
  'from',
  'to',
  'key_id',
  'alias',
  'connection',
  'upstream_model',
  'run_id',
  'work_unit_id',
  'outcome',
  'http_status',
] as const;

/** One attempt as the API shows it (docs/request-log.md "Fields"). */
export function attemptView(attempt: LoggedAttempt) {
  return {
    id: attempt.attemptId,
    object: 'attempt' as const,
    call_id: attempt.callId,
    created_at: attempt.createdAt,
    settled_at: attempt.settledAt,
    state: attempt.state,
    outcome: attempt.outcome,
    http_status: attempt.httpStatus,
    endpoint: attempt.endpoint,
    alias: attempt.alias,
    connection: attempt.connection,
    profile: attempt.profile,
    upstream_model: attempt.upstreamModel,
    key_id: attempt.keyId,
    run_id: attempt.runId,
    work_unit_id: attempt.workUnitId,
    tags: attempt.tags,
    metadata: attempt.metadata,
    reservation_micros_usd: attempt.reservationMicrosUsd,
    cost_micros_usd: attempt.costMicrosUsd,
    usage: attempt.usage && {
      input_tokens: attempt.usage.inputTokens,
      output_tokens: attempt.usage.outputTokens,
      cache_creation_input_tokens: attempt.usage.cacheCreationInputTokens,
      cache_read_input_tokens: attempt.usage.cacheReadInputTokens,
    },
    timings: { first_byte_ms: attempt.firstByteMs, total_ms: attempt.durationMs },
    upstream_request_id: attempt.upstreamRequestId,
    trace_id: attempt.traceId,
    route: attempt.route,
  };
}

export type AttemptView = ReturnType<typeof attemptView>;

/** The `after` cursor's position (created_at, attempt id); anything else is a 400 naming `after`. */
function decodeAfter(cursor: string): { createdAt: string; id: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badParameter('after', 'not a cursor this list returned (use next_cursor).');
  }
  const position = (parsed as { k?: unknown; p?: { createdAt?: unknown; id?: unknown } } | null) ?? {};
  const { createdAt, id } = position.p ?? {};
  if (
    position.k !== 'attempts' ||
    typeof createdAt !== 'string' ||
    typeof id !== 'string' ||
    Number.isNaN(Date.parse(createdAt))
  )
    throw badParameter('after', 'not a cursor this list returned (use next_cursor).');
  return { createdAt, id };
}

function httpStatus(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-5]\d\d$/.test(value))
    throw badParameter('http_status', 'must be an HTTP status from 100 to 599.');
  return Number(value);
}

/** The store query of a list request; every bad parameter is a 400 naming it. */
export function attemptLogQuery(projectId: string, query: Query): AttemptLogQuery {
  const params = new Params(query, FILTERS, ['tag.', 'metadata.']);
  const from = params.time('from');
  const to = params.time('to');
  if (from !== undefined && to !== undefined && from > to)
    throw badParameter('to', 'must not be before from.');
  const after = params.text('after');
  const limit = params.limit();
  const filters = query as Record<string, unknown>;
  return {
    projectId,
    from,
    to,
    keyId: params.text('key_id'),
    alias: params.text('alias'),
    connection: params.text('connection'),
    upstreamModel: params.text('upstream_model'),
    runId: params.text('run_id'),
    workUnitId: params.text('work_unit_id'),
    outcome: params.oneOf('outcome', SETTLEMENT_OUTCOMES),
    httpStatus: httpStatus(params.text('http_status')),
    tags: attributeFilters(filters, 'tag'),
    metadata: attributeFilters(filters, 'metadata'),
    after: after === undefined ? undefined : decodeAfter(after),
    limit,
  };
}

/** Whether an attempt's bodies were captured and until when (capture/capture-reader.ts). */
export type CaptureStatusOf = (projectId: string, attemptId: string) => Promise<CaptureStatus>;

const NOT_CAPTURED: CaptureStatus = { available: false, expires_at: null };

export class RequestLog {
  constructor(
    private readonly store: Store,
    private readonly captureStatus?: CaptureStatusOf,
  ) {}

  async list(caller: Caller, query: Query) {
    const request = attemptLogQuery(caller.projectId, query);
    const rows = await this.store.requestLog.list({ ...request, limit: request.limit + 1 });
    const items = rows.slice(0, request.limit);
    const last = items[items.length - 1];
    const hasMore = rows.length > request.limit && last !== undefined;
    return {
      object: 'list' as const,
      data: items.map(attemptView),
      has_more: hasMore,
      next_cursor: hasMore
        ? encodeCursor('attempts', { createdAt: last.createdAt, id: last.attemptId })
        : null,
    };
  }

  /** One attempt of the caller's Project; 404 attempt_not_found for an unknown or foreign id. */
  async get(caller: Caller, attemptId: string): Promise<AttemptView & { capture: CaptureStatus }> {
    const found =
      attemptId.length <= 128 ? await this.store.requestLog.get(caller.projectId, attemptId) : undefined;
    if (!found) throw new GatewayError('attempt_not_found', `No attempt ${attemptId} in this Project.`);
    const capture = this.captureStatus
      ? await this.captureStatus(caller.projectId, found.attemptId)
      : NOT_CAPTURED;
    return { ...attemptView(found), capture };
  }
}
