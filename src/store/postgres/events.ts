/**
 * The events outbox on PostgreSQL (Store.events, docs/events.md). appendEventsIn is what the store's
 * other writes call on their own transaction's client, so an event commits with the change that
 * caused it; an event whose dedupe key exists already is skipped (ON CONFLICT DO NOTHING), which is
 * what makes a threshold fire once across replicas. The ledger's plpgsql functions insert their
 * events the same way (migration-events.ts).
 */
import type pg from 'pg';
import { keyExpiredEvent, runExpiredEvent } from '../event-builders.js';
import {
  EVENT_COLUMNS,
  eventFromRow,
  eventListSql,
  eventValues,
  KEEP_OWED_EVENTS,
  type Row,
} from '../event-rows.js';
import type { EventListQuery, EventsRepository } from '../events-port.js';
import type { EventRecord, NewEvent } from '../records.js';
import { runFromRow } from '../rows.js';
import type { PgTransaction } from './transaction.js';

type Client = pg.PoolClient;
type Query = (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;

const COLUMN_COUNT = 8;

/** Appends `events` on the caller's transaction; returns how many were written (duplicates skipped). */
export async function appendEventsIn(client: Client, events: readonly NewEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const values: unknown[] = [];
  const tuples = events.map((event, index) => {
    values.push(...eventValues(event));
    const base = index * COLUMN_COUNT;
    return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}, $${base + 7}::timestamptz, $${base + 8}::jsonb)`;
  });
  const result = await client.query(
    `INSERT INTO events (${EVENT_COLUMNS}) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING`,
    values,
  );
  return result.rowCount ?? 0;
}

export class PostgresEvents implements EventsRepository {
  constructor(
    private readonly query: Query,
    private readonly transaction: PgTransaction,
  ) {}

  async listEventsAfter(sequence: number, limit: number): Promise<EventRecord[]> {
    const result = await this.query('SELECT * FROM events WHERE sequence > $1 ORDER BY sequence LIMIT $2', [
      sequence,
      limit,
    ]);
    return result.rows.map(eventFromRow);
  }

  async listEvents(projectId: string, query: EventListQuery): Promise<EventRecord[]> {
    const page = eventListSql(projectId, query, (position) => `$${position}`);
    const result = await this.query(page.sql, page.params);
    return result.rows.map(eventFromRow);
  }

  async getEvent(projectId: string, id: string): Promise<EventRecord | undefined> {
    const result = await this.query('SELECT * FROM events WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ]);
    const row = result.rows[0];
    return row ? eventFromRow(row) : undefined;
  }

  async appendEvents(events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.transaction((client) => appendEventsIn(client, events));
  }

  async noteExpirations(nowIso: string, limit: number): Promise<number> {
    return this.transaction(async (client) => {
      // SKIP LOCKED: a Run a reservation holds right now is noted on the next pass.
      const runs = await client.query<Row>(
        `WITH due AS (
           SELECT id FROM runs WHERE status = 'active' AND NOT expiry_noted AND expires_at <= $1
           ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE runs SET expiry_noted = TRUE FROM due WHERE runs.id = due.id RETURNING runs.*`,
        [nowIso, limit],
      );
      const keys = await client.query<Row>(
        `WITH due AS (
           SELECT id FROM gateway_keys
           WHERE expires_at IS NOT NULL AND revoked_at IS NULL AND NOT expiry_noted AND expires_at <= $1
           ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE gateway_keys SET expiry_noted = TRUE FROM due WHERE gateway_keys.id = due.id
         RETURNING gateway_keys.id, gateway_keys.project_id, gateway_keys.label, gateway_keys.expires_at`,
        [nowIso, limit],
      );
      const events: NewEvent[] = [
        ...runs.rows.map((row) => runExpiredEvent(runFromRow(row), nowIso)),
        ...keys.rows.map((row) =>
          keyExpiredEvent(
            {
              id: String(row.id),
              projectId: String(row.project_id),
              label: row.label === null ? null : String(row.label),
              expiresAt: (row.expires_at as Date).toISOString(),
            },
            nowIso,
          ),
        ),
      ];
      return appendEventsIn(client, events);
    });
  }

  async deleteEventsBefore(beforeIso: string, limit: number): Promise<number> {
    const result = await this.query(
      `DELETE FROM events WHERE sequence IN (
         SELECT sequence FROM events WHERE occurred_at < $1 ${KEEP_OWED_EVENTS}
         ORDER BY sequence LIMIT $2)`,
      [beforeIso, limit],
    );
    return result.rowCount ?? 0;
  }
}
