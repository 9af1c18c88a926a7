/** Response schemas of the lists and reports, for the OpenAPI document (http/openapi-reports.ts). */
import { Type as T, type TSchema } from '@sinclair/typebox';
import { OutcomeRecord, RunRecord, WorkUnitRecord } from '../governance/schemas.js';

const Time = T.String({ format: 'date-time' });
const Count = T.Integer({ minimum: 0 });
const Nullable = (schema: TSchema) => T.Union([schema, T.Null()]);

export const AttemptRecord = T.Object({
  id: T.String({ pattern: '^att_' }),
  sequence: T.Integer({ minimum: 1 }),
  run_id: Nullable(T.String()),
  key_id: T.String(),
  endpoint: T.String(),
  alias: T.String(),
  connection: T.String(),
  profile: T.String(),
  upstream_model: T.String(),
  state: T.String({ description: 'settled | unknown | released (becomes the settlement outcome union).' }),
  outcome: T.String(),
  unknown: T.Boolean({ description: 'Committed at its whole reservation: its cost could not be known.' }),
  reservation_micros_usd: Count,
  cost_micros_usd: Count,
  input_tokens: Nullable(Count),
  output_tokens: Nullable(Count),
  cache_creation_input_tokens: Nullable(Count),
  cache_read_input_tokens: Nullable(Count),
  http_status: Nullable(T.Integer()),
  duration_ms: Count,
  overran: T.Boolean(),
  created_at: Time,
  settled_at: Time,
});

function list(item: TSchema) {
  return T.Object({
    object: T.Literal('list'),
    data: T.Array(item),
    has_more: T.Boolean(),
    next_cursor: Nullable(T.String({ description: 'Pass as `cursor` for the next page; opaque.' })),
  });
}

export const OutcomeDefinitionList = list(
  T.Object({
    id: T.String(),
    version: T.Integer({ minimum: 1 }),
    kind: T.Union([T.Literal('BOOLEAN'), T.Literal('CATEGORICAL')]),
    allowed_values: T.Array(T.Union([T.String(), T.Boolean()])),
    enabled: T.Boolean(),
  }),
);
export const WorkUnitList = list(WorkUnitRecord);
export const RunList = list(RunRecord);
export const OutcomeList = list(OutcomeRecord);
export const AttemptList = list(AttemptRecord);

const SpendFigures = {
  calls: Count,
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: Count,
  cache_read_input_tokens: Count,
  committed_micros_usd: Count,
  unknown_attempts: Count,
  unknown_micros_usd: Count,
  refused_reservations: Count,
};

export const SpendReport = T.Object({
  object: T.Literal('spend_report'),
  from: Time,
  to: Time,
  group_by: T.Array(T.String()),
  rows: T.Array(
    T.Object(
      {
        bucket: T.Optional(Time),
        alias: T.Optional(T.String()),
        connection: T.Optional(T.String()),
        upstream_model: T.Optional(T.String()),
        key_id: T.Optional(T.String()),
        ...SpendFigures,
      },
      {
        description:
          'Grouped by tag.<key> or metadata.<key>, each row also carries that field: the value (string), or null for attempts without it.',
        additionalProperties: T.Union([T.String(), T.Null()]),
      },
    ),
  ),
  totals: T.Object(SpendFigures),
});

export const CostPerOutcomeReport = T.Object({
  object: T.Literal('cost_per_outcome_report'),
  definition_id: T.String(),
  group_by: T.Optional(T.String({ description: 'metadata.<key> or tag.<key> when grouped.' })),
  from: Time,
  to: Time,
  work_units: Count,
  total_spend_micros_usd: Count,
  unknown_attempts: Count,
  groups: T.Array(
    T.Object(
      {
        value: T.Union([T.String(), T.Boolean(), T.Null()], {
          description: 'null: Work Units with no Outcome yet.',
        }),
        work_units: Count,
        provisional_work_units: Count,
        total_spend_micros_usd: Count,
        spend_per_work_unit_micros_usd: Nullable(Count),
        median_spend_micros_usd: Nullable(Count),
        p90_spend_micros_usd: Nullable(Count),
        cost_per_value_micros_usd: Nullable(Count),
        unknown_attempts: Count,
      },
      {
        description:
          'Grouped, each group also carries the group_by field: the attribute value its partition is of (null: without it).',
        additionalProperties: T.Union([T.String(), T.Null()]),
      },
    ),
  ),
});
