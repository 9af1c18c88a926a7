/**
 * The event envelope (docs/events.md): what GET /svc/v1/events returns and what a webhook receiver
 * gets, the same JSON for both.
 */
import type { EventRecord } from '../store/port.js';

export interface EventEnvelope {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  project_id: string;
  resource: { type: string; id: string };
  data: Record<string, unknown>;
}

export function eventEnvelope(event: EventRecord): EventEnvelope {
  return {
    id: event.id,
    object: 'event',
    type: event.type,
    created_at: event.occurredAt,
    project_id: event.projectId,
    resource: { type: event.resourceType, id: event.resourceId },
    data: event.data,
  };
}
