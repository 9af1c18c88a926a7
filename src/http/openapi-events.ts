/** The events section of the OpenAPI document (merged into openapi.ts); docs/events.md is the reference. */
import { Type as T } from '@sinclair/typebox';
import { MAX_PAGE_SIZE } from '../reports/params.js';
import { EVENT_RESOURCE_TYPES, EVENT_TYPES } from '../store/records.js';
import { errors, idParameter, ref, schema } from './openapi-parts.js';

const SCOPE = 'Scope: governance:read or webhooks:admin. Project-scoped.';

const EventSchema = T.Object({
  id: T.String({ pattern: '^evt_', description: 'Stable; receivers dedupe on it.' }),
  object: T.Literal('event'),
  type: T.Union(EVENT_TYPES.map((type) => T.Literal(type))),
  created_at: T.String({ format: 'date-time', description: 'When the change happened.' }),
  project_id: T.String(),
  resource: T.Object({
    type: T.Union(EVENT_RESOURCE_TYPES.map((type) => T.Literal(type))),
    id: T.String(),
  }),
  data: T.Record(T.String(), T.Unknown(), {
    description: 'The resource figures; fields per type in docs/events.md.',
  }),
});

const EventListSchema = T.Object({
  object: T.Literal('list'),
  data: T.Array(EventSchema),
  has_more: T.Boolean(),
  next_cursor: T.Union([T.String({ description: 'Pass as `after` for the next page; opaque.' }), T.Null()]),
});

const query = (name: string, description: string, values: unknown = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: values,
});

export const EVENT_PATHS = {
  '/svc/v1/events': {
    get: {
      summary: "List the Project's events",
      description: `${SCOPE} Order: oldest first (the outbox's sequence). Unknown or bad parameters: 400 naming the parameter.`,
      parameters: [
        query('limit', `Page size, 1-${MAX_PAGE_SIZE} (default 50).`, {
          type: 'integer',
          minimum: 1,
          maximum: MAX_PAGE_SIZE,
        }),
        query('after', 'The next_cursor of the previous page (opaque).'),
        query('type', 'Only this event type.', { type: 'string', enum: [...EVENT_TYPES] }),
        query('resource_type', 'Only events about this kind of resource.', {
          type: 'string',
          enum: [...EVENT_RESOURCE_TYPES],
        }),
        query('resource_id', 'Only events about this resource.'),
        query('from', 'Only events created at or after this time.', { type: 'string', format: 'date-time' }),
        query('to', 'Only events created before this time.', { type: 'string', format: 'date-time' }),
      ],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('EventList') } } },
        ...errors(400, 401, 403, 429, 503),
      },
    },
  },
  '/svc/v1/events/{id}': {
    get: {
      summary: 'Read one event',
      description: `${SCOPE} Another Project's event is 404 event_not_found.`,
      parameters: [idParameter],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref('Event') } } },
        ...errors(400, 401, 403, 404, 429, 503),
      },
    },
  },
};

export const EVENT_SCHEMAS = { Event: schema(EventSchema), EventList: schema(EventListSchema) };
