/**
 * Response schemas of the request log (GET /svc/v1/attempts, /svc/v1/attempts/{id}); the OpenAPI
 * document is generated from them (http/openapi-request-log.ts) and a route test validates answers
 * against them.
 */
import { Type as T } from '@sinclair/typebox';
import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';

const Nullable = <S extends Parameters<typeof T.Union>[0][number]>(schema: S) => T.Union([schema, T.Null()]);
const Micros = T.Integer({ minimum: 0 });
const Attributes = Nullable(T.Record(T.String(), T.String()));

export const AttemptRoute = T.Object(
  {
    index: T.Integer({
      minimum: 0,
      description: "This attempt's position among its call's attempts (0: first).",
    }),
    tried: T.Array(
      T.Object({
        attempt_id: T.String(),
        connection: T.String(),
        outcome: T.String(),
        error: T.String({ description: 'How that attempt failed: http_503, timeout, connect, ...' }),
      }),
      { description: 'Attempts of the same call made before this one, each failed and retried elsewhere.' },
    ),
    skipped: T.Array(T.Object({ connection: T.String(), code: T.String(), reasons: T.Array(T.String()) }), {
      description: 'Targets of the alias routing skipped before any attempt, with why.',
    }),
  },
  { description: "The call's route as it stood when this attempt was made." },
);

export const LoggedAttemptSchema = T.Object({
  id: T.String({ pattern: '^att_' }),
  object: T.Literal('attempt'),
  call_id: Nullable(T.String({ description: 'Shared by every attempt of one client request.' })),
  created_at: T.String({ format: 'date-time' }),
  settled_at: Nullable(T.String({ format: 'date-time' })),
  state: T.Union([T.Literal('reserved'), T.Literal('settled'), T.Literal('unknown'), T.Literal('released')]),
  outcome: Nullable(T.Union(SETTLEMENT_OUTCOMES.map((outcome) => T.Literal(outcome)))),
  http_status: Nullable(T.Integer()),
  endpoint: T.String(),
  alias: T.String(),
  connection: T.String(),
  profile: T.String(),
  upstream_model: T.String(),
  key_id: T.String(),
  run_id: Nullable(T.String()),
  work_unit_id: Nullable(T.String()),
  tags: Attributes,
  metadata: Attributes,
  reservation_micros_usd: Micros,
  cost_micros_usd: Nullable(Micros),
  usage: Nullable(
    T.Object({
      input_tokens: T.Integer({ minimum: 0 }),
      output_tokens: T.Integer({ minimum: 0 }),
      cache_creation_input_tokens: T.Integer({ minimum: 0 }),
      cache_read_input_tokens: T.Integer({ minimum: 0 }),
    }),
  ),
  timings: T.Object({
    first_byte_ms: Nullable(T.Integer({ minimum: 0 })),
    total_ms: Nullable(T.Integer({ minimum: 0 })),
  }),
  upstream_request_id: Nullable(T.String()),
  trace_id: Nullable(T.String()),
  route: Nullable(AttemptRoute),
});

/** GET /svc/v1/attempts/{id}: a list item plus whether its bodies were captured (never the bodies). */
export const AttemptDetailSchema = T.Composite([
  LoggedAttemptSchema,
  T.Object({
    capture: T.Object(
      {
        available: T.Boolean({
          description: 'Whether GET /svc/v1/attempts/{id}/capture can return bodies now.',
        }),
        expires_at: Nullable(
          T.String({ format: 'date-time', description: 'When the capture stops being readable.' }),
        ),
      },
      {
        description:
          'The attempt\'s captured bodies (docs/request-log.md "Capture"): presence and expiry only.',
      },
    ),
  }),
]);

export const LoggedAttemptList = T.Object({
  object: T.Literal('list'),
  data: T.Array(LoggedAttemptSchema),
  has_more: T.Boolean(),
  next_cursor: Nullable(T.String()),
});
