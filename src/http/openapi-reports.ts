/** The lists and reports section of the OpenAPI document (merged into openapi.ts). */
import { MAX_PAGE_SIZE } from '../reports/params.js';
import {
  AttemptList,
  AttemptRecord,
  CostPerOutcomeReport,
  OutcomeDefinitionList,
  OutcomeList,
  RunList,
  SpendReport,
  WorkUnitList,
} from '../reports/schemas.js';
import { GROUP_BY_VALUES } from '../reports/spend-report.js';
import { errors, idParameter, ref, schema } from './openapi-parts.js';

const text = { type: 'string' };
const query = (name: string, description: string, values: unknown = text) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: values,
});
const oneOf = (...values: string[]) => ({ type: 'string', enum: values });
const time = { type: 'string', format: 'date-time' };

const page = [
  query('limit', `Page size, 1-${MAX_PAGE_SIZE} (default 50).`, {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
  }),
  query('cursor', 'The next_cursor of the previous page (opaque; only valid for the same list).'),
];
const range = [
  query('from', 'Start, a whole UTC hour (inclusive). Default: `to` minus 30 days.', time),
  query('to', 'End, a whole UTC hour (exclusive). Default: the end of the current hour.', time),
];

/** `metadata.<key>=<value>` (several ANDed), as one documented parameter family. */
const METADATA_FILTER = query(
  'metadata.<key>',
  'Only rows whose metadata has this key with this exact value, e.g. metadata.team=search; several are ANDed (docs/request-log.md).',
);

function listOperation(summary: string, response: string, parameters: unknown[], order: string) {
  return {
    summary,
    description: `Scope: governance:read. Project-scoped. Order: ${order}. Unknown or bad parameters: 400 naming the parameter.`,
    parameters,
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: ref(response) } } },
      ...errors(400, 401, 403, 429, 503),
    },
  };
}

function reportOperation(summary: string, response: string, parameters: unknown[]) {
  return {
    summary,
    description:
      'Scope: governance:read. Project-scoped. Exact integers of micro-USD. `Accept: text/csv` answers CSV (one line per row). Definitions: docs/reports.md.',
    parameters,
    responses: {
      '200': {
        description: 'OK',
        content: { 'application/json': { schema: ref(response) }, 'text/csv': { schema: text } },
      },
      ...errors(400, 401, 403, 429, 503),
    },
  };
}

export const REPORT_PATHS = {
  '/svc/v1/work-units': {
    get: listOperation(
      'List Work Units',
      'WorkUnitList',
      [
        query('status', 'open or closed.', oneOf('open', 'closed')),
        query('created_from', 'Created at or after (RFC 3339).', time),
        query('created_to', 'Created before (RFC 3339).', time),
        METADATA_FILTER,
        ...page,
      ],
      'created_at, id, newest first',
    ),
  },
  '/svc/v1/runs': {
    get: listOperation(
      'List Runs',
      'RunList',
      [
        query('work_unit_id', 'Only the Runs of this Work Unit.'),
        query('status', 'Derived status.', oneOf('active', 'closed', 'expired')),
        query('budget_state', 'Derived budget state.', oneOf('available', 'fully_reserved', 'depleted')),
        METADATA_FILTER,
        ...page,
      ],
      'created_at, id, newest first',
    ),
  },
  '/svc/v1/outcomes': {
    get: listOperation(
      'List Outcomes',
      'OutcomeList',
      [
        query('work_unit_id', 'Only the Outcomes of this Work Unit.'),
        query('definition_id', 'Only this Outcome Definition.'),
        query('value', 'Only this value (needs definition_id; true/false for a BOOLEAN definition).'),
        query('provisional', 'Only provisional (true) or final (false) records.', oneOf('true', 'false')),
        query('head', 'true: only head revisions (not superseded).', oneOf('true', 'false')),
        ...page,
      ],
      'governance_sequence, newest first',
    ),
  },
  '/svc/v1/outcome-definitions': {
    get: listOperation(
      'List Outcome Definitions (every version; one page)',
      'OutcomeDefinitionList',
      [],
      'id, version',
    ),
  },
  '/svc/v1/runs/{id}/attempts': {
    get: {
      ...listOperation(
        "List a Run's attempts (its audit trail)",
        'AttemptList',
        [idParameter, ...page],
        'audit sequence, oldest first',
      ),
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('AttemptList') } } },
        ...errors(400, 401, 403, 404, 429, 503),
      },
    },
  },
  '/svc/v1/reports/spend': {
    get: reportOperation('Spend report', 'SpendReport', [
      ...range,
      query(
        'group_by',
        `Comma-separated, from ${GROUP_BY_VALUES.join(', ')} (day and hour exclude each other) and at most one tag.<key> or metadata.<key> (rows carry its value under that name; null: attempts without it). Default: day.`,
      ),
    ]),
  },
  '/svc/v1/reports/cost-per-outcome': {
    get: reportOperation('Cost per Outcome report', 'CostPerOutcomeReport', [
      { ...query('definition_id', 'The Outcome Definition.'), required: true },
      ...range,
      query(
        'group_by',
        "metadata.<key> (partitions the Work Units by that key of their metadata) or tag.<key> (splits each Work Unit's spend by the tag's value on its attempts); groups carry the value under that name.",
      ),
    ]),
  },
};

export const REPORT_SCHEMAS = {
  Attempt: schema(AttemptRecord),
  WorkUnitList: schema(WorkUnitList),
  RunList: schema(RunList),
  OutcomeList: schema(OutcomeList),
  OutcomeDefinitionList: schema(OutcomeDefinitionList),
  AttemptList: schema(AttemptList),
  SpendReport: schema(SpendReport),
  CostPerOutcomeReport: schema(CostPerOutcomeReport),
};
