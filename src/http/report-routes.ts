/**
 * /svc/v1 lists, the request log and reports (scope governance:read). Thin: guard, hand the query string to the use
 * case, render JSON, or CSV when the client accepts text/csv (reports only).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { costPerOutcomeReport } from '../reports/cost-per-outcome.js';
import { type CsvValue, toCsv } from '../reports/csv.js';
import { Lists } from '../reports/lists.js';
import type { Query } from '../reports/params.js';
import { type CaptureStatusOf, RequestLog } from '../reports/request-log.js';
import { SPEND_FIGURES, spendGroupColumns, spendReport } from '../reports/spend-report.js';
import type { Store } from '../store/port.js';
import type { Guard } from './governance-routes.js';

export interface ReportRouteDeps {
  guard: Guard;
  store: Store;
  clock: Clock;
  pendingFor: (runId: string) => number;
  /** The attempt detail's `capture` field; without it every attempt reads as not captured. */
  captureStatus?: CaptureStatusOf;
}

type IdParams = { Params: { id: string } };

const COST_PER_OUTCOME_COLUMNS = [
  'value',
  'work_units',
  'provisional_work_units',
  'total_spend_micros_usd',
  'spend_per_work_unit_micros_usd',
  'median_spend_micros_usd',
  'p90_spend_micros_usd',
  'cost_per_value_micros_usd',
  'unknown_attempts',
] as const;

function wantsCsv(request: FastifyRequest): boolean {
  return /\btext\/csv\b/i.test(request.headers.accept ?? '');
}

function sendCsv(
  reply: FastifyReply,
  name: string,
  columns: readonly string[],
  rows: Array<Record<string, CsvValue>>,
) {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .send(toCsv(columns, rows));
}

export function registerReportRoutes(app: FastifyInstance, deps: ReportRouteDeps): void {
  const lists = new Lists(deps);
  const requestLog = new RequestLog(deps.store, deps.captureStatus);
  const query = (request: FastifyRequest) => request.query as Query;

  app.get('/svc/v1/work-units', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return lists.workUnits(caller, query(request));
  });

  app.get('/svc/v1/runs', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return lists.runs(caller, query(request));
  });

  app.get('/svc/v1/outcomes', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return lists.outcomes(caller, query(request));
  });

  app.get('/svc/v1/outcome-definitions', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return lists.definitions(caller, query(request));
  });

  // The request log (reports/request-log.ts).
  app.get('/svc/v1/attempts', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return requestLog.list(caller, query(request));
  });

  app.get<IdParams>('/svc/v1/attempts/:id', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return requestLog.get(caller, request.params.id);
  });

  app.get<IdParams>('/svc/v1/runs/:id/attempts', async (request) => {
    const caller = await deps.guard(request, 'governance:read');
    return lists.attempts(caller, request.params.id, query(request));
  });

  app.get('/svc/v1/reports/spend', async (request, reply) => {
    const caller = await deps.guard(request, 'governance:read');
    const report = await spendReport(deps.store, caller, query(request), deps.clock.now());
    if (!wantsCsv(request)) return report;
    return sendCsv(reply, 'spend', [...spendGroupColumns(report.group_by), ...SPEND_FIGURES], report.rows);
  });

  app.get('/svc/v1/reports/cost-per-outcome', async (request, reply) => {
    const caller = await deps.guard(request, 'governance:read');
    const report = await costPerOutcomeReport(deps.store, caller, query(request), deps.clock.now());
    if (!wantsCsv(request)) return report;
    return sendCsv(
      reply,
      `cost-per-outcome-${report.definition_id}`,
      [...(report.group_by === undefined ? [] : [report.group_by]), ...COST_PER_OUTCOME_COLUMNS],
      report.groups,
    );
  });
}
