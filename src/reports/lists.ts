/**
 * The governance lists: Work Units, Runs, Outcomes and a Run's attempts (its audit trail). Each is
 * Project-scoped, in a stable order (newest first by (created_at, id) or governance_sequence;
 * attempts oldest first by audit sequence), with an opaque keyset cursor: a page is never shifted by
 * rows written while a client pages.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { attributeFilters } from '../governance/attributes.js';
import type { Caller } from '../governance/service.js';
import { outcomeBody, runBody, workUnitBody } from '../governance/views.js';
import type { Clock } from '../lib/clock.js';
import type { AuditEntry, Store } from '../store/port.js';
import { isUnknownAttempt } from '../store/report-sql.js';
import { type CursorKind, decodeCreatedCursor, decodeSequenceCursor, encodeCursor } from './cursor.js';
import { badParameter, Params, type Query } from './params.js';

export interface ListPage {
  object: 'list';
  data: unknown[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ListDeps {
  store: Store;
  clock: Clock;
  /** In-process reservations not yet durable, per Run (0 without a ledger). */
  pendingFor: (runId: string) => number;
}

function page<T>(
  rows: T[],
  limit: number,
  kind: CursorKind,
  position: (row: T) => unknown,
  render: (row: T) => unknown,
): ListPage {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const hasMore = rows.length > limit && last !== undefined;
  return {
    object: 'list',
    data: items.map(render),
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(kind, position(last)) : null,
  };
}

const created = (row: { createdAt: string; id: string }) => ({ createdAt: row.createdAt, id: row.id });

export function attemptBody(entry: AuditEntry) {
  return {
    id: entry.attemptId,
    sequence: entry.sequence,
    run_id: entry.runId,
    key_id: entry.keyId,
    endpoint: entry.endpoint,
    alias: entry.alias,
    connection: entry.connection,
    profile: entry.profile,
    upstream_model: entry.upstreamModel,
    state: entry.state,
    outcome: entry.outcome,
    unknown: isUnknownAttempt(entry),
    reservation_micros_usd: entry.reservationMicrosUsd,
    cost_micros_usd: entry.costMicrosUsd,
    input_tokens: entry.usage?.inputTokens ?? null,
    output_tokens: entry.usage?.outputTokens ?? null,
    cache_creation_input_tokens: entry.usage?.cacheCreationInputTokens ?? null,
    cache_read_input_tokens: entry.usage?.cacheReadInputTokens ?? null,
    http_status: entry.httpStatus,
    duration_ms: entry.durationMs,
    overran: entry.overran,
    created_at: entry.createdAt,
    settled_at: entry.settledAt,
  };
}

export class Lists {
  constructor(private readonly deps: ListDeps) {}

  async workUnits(caller: Caller, query: Query): Promise<ListPage> {
    const params = new Params(
      query,
      ['status', 'created_from', 'created_to', 'limit', 'cursor'],
      ['metadata.'],
    );
    const limit = params.limit();
    const cursor = params.text('cursor');
    const rows = await this.deps.store.reports.listWorkUnits({
      projectId: caller.projectId,
      status: params.oneOf('status', ['open', 'closed'] as const),
      createdFrom: params.time('created_from'),
      createdTo: params.time('created_to'),
      metadata: attributeFilters(query, 'metadata'),
      after: cursor === undefined ? undefined : decodeCreatedCursor('work_units', cursor),
      limit: limit + 1,
    });
    return page(rows, limit, 'work_units', created, workUnitBody);
  }

  async runs(caller: Caller, query: Query): Promise<ListPage> {
    const params = new Params(
      query,
      ['work_unit_id', 'status', 'budget_state', 'limit', 'cursor'],
      ['metadata.'],
    );
    const limit = params.limit();
    const cursor = params.text('cursor');
    const now = this.deps.clock.now();
    const rows = await this.deps.store.reports.listRuns({
      projectId: caller.projectId,
      workUnitId: params.text('work_unit_id'),
      status: params.oneOf('status', ['active', 'closed', 'expired'] as const),
      budgetState: params.oneOf('budget_state', ['available', 'fully_reserved', 'depleted'] as const),
      nowIso: new Date(now).toISOString(),
      metadata: attributeFilters(query, 'metadata'),
      after: cursor === undefined ? undefined : decodeCreatedCursor('runs', cursor),
      limit: limit + 1,
    });
    return page(rows, limit, 'runs', created, (run) => runBody(run, now, this.deps.pendingFor(run.id)));
  }

  async outcomes(caller: Caller, query: Query): Promise<ListPage> {
    const params = new Params(query, [
      'work_unit_id',
      'definition_id',
      'value',
      'provisional',
      'head',
      'limit',
      'cursor',
    ]);
    const limit = params.limit();
    const cursor = params.text('cursor');
    const definitionId = params.text('definition_id');
    const value = params.text('value');
    const rows = await this.deps.store.reports.listOutcomes({
      projectId: caller.projectId,
      workUnitId: params.text('work_unit_id'),
      definitionId,
      valueJson: value === undefined ? undefined : await this.valueJson(caller, definitionId, value),
      provisional: params.flag('provisional'),
      headOnly: params.flag('head'),
      beforeSequence: cursor === undefined ? undefined : decodeSequenceCursor('outcomes', cursor),
      limit: limit + 1,
    });
    return page(rows, limit, 'outcomes', (row) => row.governanceSequence, outcomeBody);
  }

  /** A value filter is read against its definition's kind: `true` is a boolean, `happy` a category. */
  private async valueJson(caller: Caller, definitionId: string | undefined, value: string): Promise<string> {
    if (definitionId === undefined) throw badParameter('value', 'needs definition_id.');
    const definitions = (await this.deps.store.listDefinitions(caller.projectId)).filter(
      (definition) => definition.id === definitionId,
    );
    if (definitions.length === 0)
      throw badParameter('definition_id', `unknown Outcome Definition ${definitionId}.`);
    if (definitions.some((definition) => definition.kind === 'BOOLEAN')) {
      if (value !== 'true' && value !== 'false')
        throw badParameter('value', 'must be true or false for this definition.');
      return value;
    }
    return JSON.stringify(value);
  }

  /** The Project's Outcome Definitions, every version (bounded by configuration: one page). */
  async definitions(caller: Caller, query: Query): Promise<ListPage> {
    new Params(query, []);
    const definitions = await this.deps.store.listDefinitions(caller.projectId);
    return {
      object: 'list',
      data: definitions.map((definition) => ({
        id: definition.id,
        version: definition.version,
        kind: definition.kind,
        allowed_values: definition.allowedValues,
        enabled: definition.enabled,
      })),
      has_more: false,
      next_cursor: null,
    };
  }

  async attempts(caller: Caller, runId: string, query: Query): Promise<ListPage> {
    const params = new Params(query, ['limit', 'cursor']);
    const limit = params.limit();
    const cursor = params.text('cursor');
    const run = await this.deps.store.getRun(caller.projectId, runId);
    if (!run) throw new GatewayError('run_not_found', `Run ${runId} not found.`);
    const after = cursor === undefined ? 0 : decodeSequenceCursor('attempts', cursor);
    const rows = await this.deps.store.reports.listAttempts(run.id, after, limit + 1);
    return page(rows, limit, 'attempts', (row) => row.sequence, attemptBody);
  }
}
