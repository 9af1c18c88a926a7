/** The body-capture section of the OpenAPI document (merged into openapi.ts): GET /svc/v1/attempts/{id}/capture. */
import { Type as T } from '@sinclair/typebox';
import { errors, idParameter, ref, schema } from './openapi-parts.js';

const CapturedBody = {
  content_type: T.Union([T.String(), T.Null()]),
  encoding: T.Union([T.Literal('utf8'), T.Literal('base64')]),
  body: T.String({ description: 'The kept bytes: text for utf8, base64 for base64.' }),
  bytes: T.Integer({ minimum: 0, description: 'The whole body length in bytes, kept or not.' }),
  truncated: T.Boolean({ description: 'The body was longer than max_body_bytes and is kept cut.' }),
};

const AttemptCapture = T.Object(
  {
    object: T.Literal('attempt.capture'),
    attempt_id: T.String(),
    call_attempt_ids: T.Array(T.String(), { description: 'Every attempt of the same call, in order.' }),
    captured_at: T.String({ format: 'date-time' }),
    expires_at: T.String({ format: 'date-time' }),
    request: T.Object(CapturedBody, { additionalProperties: false }),
    response: T.Object(
      { status: T.Integer({ minimum: 100, maximum: 599 }), ...CapturedBody },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const CAPTURE_PATHS = {
  '/svc/v1/attempts/{id}/capture': {
    get: {
      summary: "The request and response bodies captured for an attempt's call",
      description:
        "Scope: captures:read. Captures exist for Projects with capture on (projects[].capture), until retention_hours after the attempt. 404 capture_not_found when there is none: capture off, expired, dropped, an unknown id or another Project's attempt.",
      parameters: [idParameter],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('AttemptCapture') } } },
        ...errors(401, 403, 404, 429, 503),
      },
    },
  },
};

export const CAPTURE_SCHEMAS = { AttemptCapture: schema(AttemptCapture) };
