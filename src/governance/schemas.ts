/**
 * Request and response schemas of the governance API. The same TypeBox objects validate requests
 * (governance/validate.ts) and generate GET /svc/v1/openapi.json (http/openapi.ts), so the document
 * cannot drift from what is enforced.
 */
import { Type as T } from '@sinclair/typebox';

const Time = T.String({ format: 'date-time' });
const NullableTime = T.Union([Time, T.Null()]);
const Micros = T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/** Attributes of a Work Unit or Run (limits: governance/attributes.ts, docs/request-log.md). */
export const Metadata = T.Record(
  T.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$' }),
  T.String({ maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }),
  {
    maxProperties: 16,
    description:
      'String attributes set at creation: at most 16 keys of 1-64 characters ([A-Za-z][A-Za-z0-9_.-]*), values of 0-256 characters without control characters.',
  },
);
const NullableMetadata = T.Union([Metadata, T.Null()]);

export const CreateWorkUnitBody = T.Object(
  {
    outcome_definition_ids: T.Optional(
      T.Array(T.String({ minLength: 1, maxLength: 128 }), { maxItems: 8, uniqueItems: true }),
    ),
    metadata: T.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const CloseWorkUnitBody = T.Object({}, { additionalProperties: false });

export const CreateRunBody = T.Object(
  {
    work_unit_id: T.String({ minLength: 1, maxLength: 128 }),
    budget_micros_usd: T.Optional(Micros),
    ttl_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 10 * 365 * 86_400 })),
    metadata: T.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const CloseRunBody = T.Object(
  { reason: T.Optional(T.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);

export const ReportOutcomeBody = T.Object(
  {
    definition_id: T.String({ minLength: 1, maxLength: 128 }),
    value: T.Union([T.String({ maxLength: 128 }), T.Boolean()]),
    observed_at: T.String({ minLength: 1, maxLength: 64 }),
    evidence_ref: T.Optional(T.String({ minLength: 1, maxLength: 128 })),
    evidence_sha256: T.Optional(T.String({ pattern: '^[0-9a-f]{64}$' })),
    supersedes_outcome_id: T.Optional(T.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

export const WorkUnitRecord = T.Object({
  id: T.String({ pattern: '^wku_' }),
  project_id: T.String(),
  status: T.Union([T.Literal('open'), T.Literal('closed')]),
  created_at: Time,
  closed_at: NullableTime,
  outcome_definitions: T.Array(T.Object({ id: T.String(), version: T.Integer() })),
  metadata: NullableMetadata,
});

export const RunRecord = T.Object({
  id: T.String({ pattern: '^run_' }),
  work_unit_id: T.String(),
  budget_micros_usd: Micros,
  committed_micros_usd: Micros,
  reserved_micros_usd: Micros,
  remaining_micros_usd: Micros,
  unknown_attempts: T.Integer({ minimum: 0 }),
  budget_state: T.Union([T.Literal('available'), T.Literal('fully_reserved'), T.Literal('depleted')]),
  status: T.Union([T.Literal('active'), T.Literal('closed'), T.Literal('expired')]),
  created_at: Time,
  expires_at: Time,
  closed_at: NullableTime,
  close_reason: T.Union([T.String(), T.Null()]),
  metadata: NullableMetadata,
});

export const OutcomeRecord = T.Object({
  id: T.String({ pattern: '^out_' }),
  work_unit_id: T.String(),
  definition_id: T.String(),
  definition_version: T.Integer(),
  value: T.Union([T.String(), T.Boolean()]),
  reporter_key_id: T.String(),
  observed_at: Time,
  ingested_at: Time,
  revision: T.Integer({ minimum: 1 }),
  governance_sequence: T.Integer({ minimum: 1 }),
  provisional: T.Boolean(),
  evidence_ref: T.Union([T.String(), T.Null()]),
  evidence_sha256: T.Union([T.String(), T.Null()]),
  supersedes_outcome_id: T.Union([T.String(), T.Null()]),
});

export const WorkUnitView = T.Object({
  work_unit: WorkUnitRecord,
  runs: T.Array(RunRecord),
  outcomes: T.Array(OutcomeRecord),
});

export const ErrorBody = T.Object({
  error: T.Object({ code: T.String(), message: T.String(), request_id: T.String() }),
});
