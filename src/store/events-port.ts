/**
 * The events sub-port of the store (Store.events): the outbox every event is written to (in the same
 * transaction as the change that caused it, by the store method making that change) and read from by
 * GET /svc/v1/events and the webhook dispatcher. docs/events.md lists the types and when they fire.
 */
import type { EventRecord, EventResourceType, EventType, NewEvent } from './records.js';

export interface EventListQuery {
  /** Only events after this sequence (the page cursor). */
  afterSequence?: number;
  limit: number;
  type?: EventType;
  resourceType?: EventResourceType;
  resourceId?: string;
  /** RFC 3339, inclusive. */
  from?: string;
  /** RFC 3339, exclusive. */
  to?: string;
}

export interface EventsRepository {
  /** Events of every Project with sequence > `sequence`, ascending, at most `limit` (the dispatcher's feed). */
  listEventsAfter(sequence: number, limit: number): Promise<EventRecord[]>;
  /** One Project's events matching the query, ascending by sequence, at most `query.limit`. */
  listEvents(projectId: string, query: EventListQuery): Promise<EventRecord[]>;
  /** The event of this Project with this id; another Project's event is undefined. */
  getEvent(projectId: string, id: string): Promise<EventRecord | undefined>;
  /** Appends events in one transaction; an event whose dedupeKey exists already is skipped. */
  appendEvents(events: NewEvent[]): Promise<void>;
  /**
   * The expiry sweep: writes run.expired for at most `limit` active Runs and key.expired for at most
   * `limit` unrevoked keys whose expiry is at or before `nowIso` and not yet written, each marked in
   * the same transaction (once per Run or key, whichever replica sweeps). Returns how many events.
   */
  noteExpirations(nowIso: string, limit: number): Promise<number>;
  /**
   * Deletes at most `limit` events that occurred before `beforeIso` (retention); returns how many.
   * Events a webhook delivery still waits for are kept (see docs/events.md, Retention).
   */
  deleteEventsBefore(beforeIso: string, limit: number): Promise<number>;
}
