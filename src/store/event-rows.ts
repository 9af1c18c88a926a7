/**
 * The events table for both adapters: the row mapper, the insert (skipping a repeated dedupe key)
 * and the page query of GET /svc/v1/events (they differ only in how a parameter is written: `?` or
 * `$n`, and in what the insert's conflict clause looks like).
 */
import type { EventListQuery } from './events-port.js';
import type { EventRecord, EventResourceType, EventType, NewEvent } from './records.js';

export type Row = Record<string, unknown>;
type Placeholder = (position: number) => string;

export function eventFromRow(row: Row): EventRecord {
  const occurredAt = row.occurred_at;
  const data = row.data;
  return {
    sequence: Number(row.sequence),
    id: String(row.id),
    projectId: String(row.project_id),
    type: String(row.type) as EventType,
    resourceType: String(row.resource_type) as EventResourceType,
    resourceId: String(row.resource_id),
    occurredAt: occurredAt instanceof Date ? occurredAt.toISOString() : String(occurredAt),
    data: (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>,
  };
}

export const EVENT_COLUMNS =
  'id, project_id, type, resource_type, resource_id, dedupe_key, occurred_at, data';

/** The values of one event in EVENT_COLUMNS order (data as JSON text: both adapters take it so). */
export function eventValues(event: NewEvent): unknown[] {
  return [
    event.id,
    event.projectId,
    event.type,
    event.resourceType,
    event.resourceId,
    event.dedupeKey ?? null,
    event.occurredAt,
    JSON.stringify(event.data),
  ];
}

/**
 * The retention's condition that keeps an event a webhook delivery still waits for (webhook
 * deliveries `pending` or `delivering`, table webhook_deliveries of migration 13).
 */
export const KEEP_OWED_EVENTS = `AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_sequence = events.sequence
  AND (d.state = 'pending' OR d.state = 'delivering'))`;

export interface PageSql {
  sql: string;
  params: unknown[];
}

/** One Project's events after the cursor, filtered, ascending (served by events_by_project). */
export function eventListSql(projectId: string, query: EventListQuery, placeholder: Placeholder): PageSql {
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return placeholder(params.length);
  };
  const where = [`project_id = ${bind(projectId)}`, `sequence > ${bind(query.afterSequence ?? 0)}`];
  if (query.type !== undefined) where.push(`type = ${bind(query.type)}`);
  if (query.resourceType !== undefined) where.push(`resource_type = ${bind(query.resourceType)}`);
  if (query.resourceId !== undefined) where.push(`resource_id = ${bind(query.resourceId)}`);
  if (query.from !== undefined) where.push(`occurred_at >= ${bind(query.from)}`);
  if (query.to !== undefined) where.push(`occurred_at < ${bind(query.to)}`);
  const sql = `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY sequence LIMIT ${bind(query.limit)}`;
  return { sql, params };
}
