/**
 * Request and response schemas of /svc/v1/keys. The same TypeBox objects validate requests and
 * generate the OpenAPI document (http/openapi.ts).
 */
import { Type as T } from '@sinclair/typebox';
import { InferenceLimitsSchema, SCOPES, SpendCapsSchema } from '../config/schema.js';

const Time = T.String({ format: 'date-time' });
const NullableTime = T.Union([Time, T.Null()]);
const Scope = T.Union(SCOPES.map((scope) => T.Literal(scope)));

export const CreateKeyBody = T.Object(
  {
    label: T.Optional(T.String({ maxLength: 200 })),
    scopes: T.Array(Scope, { minItems: 1, uniqueItems: true }),
    /** RFC 3339; must be in the future. Exclusive with ttl_seconds. */
    expires_at: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    ttl_seconds: T.Optional(T.Integer({ minimum: 1, maximum: 10 * 365 * 86_400 })),
    caps: T.Optional(SpendCapsSchema),
    /** Requests and tokens per minute of this key, shared by every replica; absent = none. */
    inference_limits: T.Optional(InferenceLimitsSchema),
    /** Model aliases the key may use; absent = every alias. */
    models: T.Optional(
      T.Array(T.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 256, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
);

export const RevokeKeyBody = T.Object({}, { additionalProperties: false });

export const KeyRecordSchema = T.Object({
  id: T.String({ pattern: '^key_' }),
  object: T.Literal('gateway_key'),
  project_id: T.String(),
  label: T.Union([T.String(), T.Null()]),
  scopes: T.Array(T.String()),
  models: T.Union([T.Array(T.String()), T.Null()]),
  caps: SpendCapsSchema,
  inference_limits: InferenceLimitsSchema,
  status: T.Union([T.Literal('active'), T.Literal('revoked'), T.Literal('expired')]),
  created_at: Time,
  expires_at: NullableTime,
  revoked_at: NullableTime,
});

/** The create response: the record plus the secret, shown once (null on an idempotent replay). */
export const CreatedKeySchema = T.Intersect([
  KeyRecordSchema,
  T.Object({ secret: T.Union([T.String({ pattern: '^gw_' }), T.Null()]) }),
]);

export const KeyListSchema = T.Object({ object: T.Literal('list'), data: T.Array(KeyRecordSchema) });
