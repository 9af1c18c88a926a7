/**
 * Bodies and answers of /svc/v1/webhook-endpoints (TypeBox): validated on the way in, and the
 * OpenAPI document's schemas (http/openapi-webhooks.ts).
 */
import { Type as T } from '@sinclair/typebox';
import { EVENT_TYPES } from '../store/records.js';

const EventTypeName = T.Union(EVENT_TYPES.map((type) => T.Literal(type)));

export const CreateEndpointBody = T.Object(
  {
    /** Checked by url-policy.ts (length included), so every refusal is invalid_webhook_url. */
    url: T.String(),
    /** Event types delivered to the endpoint; absent or null: every type. */
    event_types: T.Optional(T.Union([T.Array(EventTypeName, { minItems: 1, uniqueItems: true }), T.Null()])),
    description: T.Optional(T.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const RotateSecretBody = T.Object(
  {
    /** How long the previous secret keeps signing; default webhooks.rotation_overlap_seconds. */
    overlap_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 7 * 86_400 })),
  },
  { additionalProperties: false },
);

export const RedeliverBody = T.Object({}, { additionalProperties: false });

const Time = T.String({ format: 'date-time' });
const NullableTime = T.Union([Time, T.Null()]);

export const EndpointRecordSchema = T.Object({
  id: T.String({ pattern: '^whe_' }),
  object: T.Literal('webhook_endpoint'),
  project_id: T.String(),
  url: T.String(),
  description: T.Union([T.String(), T.Null()]),
  event_types: T.Union([T.Array(T.String()), T.Null()]),
  source: T.Union([T.Literal('api'), T.Literal('config')]),
  status: T.Union([T.Literal('active'), T.Literal('disabled')]),
  created_at: Time,
  /** During a rotation overlap: when the previous secret stops signing. */
  previous_secret_expires_at: NullableTime,
});

/** Create and rotate answers: the record plus the secret, shown once (null on an idempotent replay). */
export const EndpointWithSecretSchema = T.Intersect([
  EndpointRecordSchema,
  T.Object({ secret: T.Union([T.String({ pattern: '^whsec_' }), T.Null()]) }),
]);

export const EndpointListSchema = T.Object({
  object: T.Literal('list'),
  data: T.Array(EndpointRecordSchema),
});

export const DeletedEndpointSchema = T.Object({
  id: T.String(),
  object: T.Literal('webhook_endpoint'),
  deleted: T.Literal(true),
});

export const AttemptSchema = T.Object({
  attempt: T.Integer(),
  started_at: Time,
  status_code: T.Union([T.Integer(), T.Null()]),
  error: T.Union([T.String(), T.Null()]),
  latency_ms: T.Integer(),
});

export const DeliverySchema = T.Object({
  id: T.String({ pattern: '^whd_' }),
  object: T.Literal('webhook_delivery'),
  endpoint_id: T.String(),
  event_id: T.String(),
  event_type: T.String(),
  status: T.Union([
    T.Literal('pending'),
    T.Literal('delivering'),
    T.Literal('succeeded'),
    T.Literal('failed'),
  ]),
  attempts: T.Integer(),
  last_status_code: T.Union([T.Integer(), T.Null()]),
  last_error: T.Union([T.String(), T.Null()]),
  last_latency_ms: T.Union([T.Integer(), T.Null()]),
  next_attempt_at: NullableTime,
  give_up_at: Time,
  created_at: Time,
  completed_at: NullableTime,
  recent_attempts: T.Array(AttemptSchema),
});

export const DeliveryListSchema = T.Object({
  object: T.Literal('list'),
  data: T.Array(DeliverySchema),
  has_more: T.Boolean(),
  next_cursor: T.Union([T.String(), T.Null()]),
});
