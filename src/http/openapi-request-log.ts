/** The request log section of the OpenAPI document (merged into openapi.ts). */
import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';
import { MAX_PAGE_SIZE } from '../reports/params.js';
import {
  AttemptDetailSchema,
  LoggedAttemptList,
  LoggedAttemptSchema,
} from '../reports/request-log-schemas.js';
import { errors, idParameter, ref, schema } from './openapi-parts.js';

const text = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
const query = (name: string, description: string, values: unknown = text) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: values,
});

export const REQUEST_LOG_PATHS = {
  '/svc/v1/attempts': {
    get: {
      summary: 'The request log: every attempt of the Project',
      description:
        'Scope: governance:read. Every attempt of the Project, with or without a Run (fallback attempts each once; the attempts of one client request share call_id; attempts still in flight appear with state reserved). Order: created_at, id, newest first; keyset pages. Unknown or bad parameters: 400 naming the parameter. docs/request-log.md.',
      parameters: [
        query('limit', `Page size, 1-${MAX_PAGE_SIZE} (default 50).`, {
          type: 'integer',
          minimum: 1,
          maximum: MAX_PAGE_SIZE,
        }),
        query('after', 'The next_cursor of the previous page (opaque).'),
        query('from', 'Created at or after (RFC 3339).', time),
        query('to', 'Created before (RFC 3339).', time),
        query('key_id', 'Only attempts made with this Gateway Key.'),
        query('alias', 'Only attempts of this model alias.'),
        query('connection', 'Only attempts sent to this connection.'),
        query('upstream_model', "Only attempts for this upstream model (the target's model)."),
        query('run_id', 'Only attempts attached to this Run.'),
        query('work_unit_id', 'Only attempts attached to a Run of this Work Unit.'),
        query('outcome', 'Settlement outcome (leaves attempts in flight out).', {
          type: 'string',
          enum: [...SETTLEMENT_OUTCOMES],
        }),
        query('http_status', "The upstream's HTTP status (leaves attempts in flight out).", {
          type: 'integer',
          minimum: 100,
          maximum: 599,
        }),
        query(
          'tag.<key>',
          'Only attempts whose call carried this tag (Svc-Tags), e.g. tag.team=search; ANDed.',
        ),
        query(
          'metadata.<key>',
          "Only attempts whose metadata (the Run's over its Work Unit's) has this value, e.g. metadata.customer=acme; ANDed.",
        ),
      ],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('LoggedAttemptList') } } },
        ...errors(400, 401, 403, 429, 503),
      },
    },
  },
  '/svc/v1/attempts/{id}': {
    get: {
      summary: 'One attempt with its route, tokens, cost, timings and ids',
      description:
        "Scope: governance:read. An attempt of the caller's Project, settled or in flight (state reserved). Another Project's attempt answers 404 attempt_not_found like an unknown id.",
      parameters: [idParameter],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('AttemptDetail') } } },
        ...errors(401, 403, 404, 429, 503),
      },
    },
  },
};

export const REQUEST_LOG_SCHEMAS = {
  LoggedAttempt: schema(LoggedAttemptSchema),
  LoggedAttemptList: schema(LoggedAttemptList),
  AttemptDetail: schema(AttemptDetailSchema),
};
