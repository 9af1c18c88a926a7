/**
 * The JSON envelope of an event, as webhook receivers get it (docs/events.md):
 * `{ id, object: "event", type, created_at, project_id, resource: {type, id}, data }`.
 */
import type { EventRecord } from '../store/records.js';

export function eventEnvelope(event: EventRecord) {
  return {
    id: event.id,
    object: 'event' as const,
    type: event.type,
    created_at: event.occurredAt,
    project_id: event.projectId,
    resource: { type: event.resourceType, id: event.resourceId },
    data: event.data,
  };
}
