/**
 * GET /svc/v1/events and GET /svc/v1/events/{id}: a Project's events, oldest first (the outbox's
 * order), with filters and an opaque keyset cursor. Parameters are validated strictly (reports/
 * params.ts): an unknown, repeated or bad one is a 400 naming it; another Project's event is 404.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from '../governance/service.js';
import { badParameter, Params, type Query } from '../reports/params.js';
import type { Store } from '../store/port.js';
import { EVENT_RESOURCE_TYPES, EVENT_TYPES } from '../store/records.js';
import { type EventEnvelope, eventEnvelope } from './envelope.js';

export interface EventPage {
  object: 'list';
  data: EventEnvelope[];
  has_more: boolean;
  next_cursor: string | null;
}

const CURSOR_TAG = 'events';

function encodeCursor(sequence: number): string {
  return Buffer.from(JSON.stringify({ k: CURSOR_TAG, p: sequence })).toString('base64url');
}

function decodeCursor(cursor: string): number {
  let parsed: { k?: unknown; p?: unknown } | null = null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown; p?: unknown };
  } catch {
    // reported below
  }
  const position = parsed?.p;
  if (
    parsed?.k !== CURSOR_TAG ||
    typeof position !== 'number' ||
    !Number.isSafeInteger(position) ||
    position < 0
  )
    throw badParameter('after', 'not a cursor this list returned (pass next_cursor as it came).');
  return position;
}

export class EventsApi {
  constructor(private readonly store: Store) {}

  async list(caller: Caller, query: Query): Promise<EventPage> {
    const params = new Params(query, [
      'limit',
      'after',
      'type',
      'resource_type',
      'resource_id',
      'from',
      'to',
    ]);
    const limit = params.limit();
    const after = params.text('after');
    const from = params.time('from');
    const to = params.time('to');
    if (from !== undefined && to !== undefined && from >= to) throw badParameter('to', 'must be after from.');
    const rows = await this.store.events.listEvents(caller.projectId, {
      afterSequence: after === undefined ? undefined : decodeCursor(after),
      limit: limit + 1,
      type: params.oneOf('type', EVENT_TYPES),
      resourceType: params.oneOf('resource_type', EVENT_RESOURCE_TYPES),
      resourceId: params.text('resource_id'),
      from,
      to,
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    const hasMore = rows.length > limit && last !== undefined;
    return {
      object: 'list',
      data: items.map(eventEnvelope),
      has_more: hasMore,
      next_cursor: hasMore ? encodeCursor(last.sequence) : null,
    };
  }

  async get(caller: Caller, id: string, query: Query): Promise<EventEnvelope> {
    new Params(query, []);
    const event = await this.store.events.getEvent(caller.projectId, id);
    if (!event) throw new GatewayError('event_not_found', `No event ${id} in this Project.`);
    return eventEnvelope(event);
  }
}
