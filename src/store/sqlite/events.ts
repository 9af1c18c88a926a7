/**
 * The events outbox on SQLite (Store.events, docs/events.md). appendEventsIn is what the store's
 * other writes call inside their own transaction, so an event commits with the change that caused
 * it; an event whose dedupe key exists already is ignored (INSERT OR IGNORE on the unique key).
 */
import type Database from 'better-sqlite3';
import { EVENT_COLUMNS, eventFromRow, eventListSql, eventValues, type Row } from '../event-rows.js';
import type { EventListQuery, EventsRepository } from '../events-port.js';
import type { EventRecord, NewEvent } from '../records.js';
import type { Sql, SqliteRead, SqliteTransaction } from './transaction.js';

const INSERT = `INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;

/** Appends `events` in the caller's transaction; returns how many were written (duplicates skipped). */
export function appendEventsIn(sql: Sql, events: readonly NewEvent[]): number {
  let written = 0;
  for (const event of events) written += sql(INSERT).run(...eventValues(event)).changes;
  return written;
}

export class SqliteEvents implements EventsRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly sql: Sql,
    private readonly read: SqliteRead,
    private readonly transaction: SqliteTransaction,
  ) {}

  async listEventsAfter(sequence: number, limit: number): Promise<EventRecord[]> {
    const rows = this.read(() =>
      this.sql('SELECT * FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?').all(sequence, limit),
    ) as Row[];
    return rows.map(eventFromRow);
  }

  async listEvents(projectId: string, query: EventListQuery): Promise<EventRecord[]> {
    const page = eventListSql(projectId, query, () => '?');
    const rows = this.read(() => this.db.prepare(page.sql).all(...page.params)) as Row[];
    return rows.map(eventFromRow);
  }

  async getEvent(projectId: string, id: string): Promise<EventRecord | undefined> {
    const row = this.read(() =>
      this.sql('SELECT * FROM events WHERE id = ? AND project_id = ?').get(id, projectId),
    ) as Row | undefined;
    return row ? eventFromRow(row) : undefined;
  }

  async appendEvents(events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.transaction(() => appendEventsIn(this.sql, events));
  }

  async deleteEventsBefore(beforeIso: string, limit: number): Promise<number> {
    return this.transaction(
      () =>
        this.sql(
          `DELETE FROM events WHERE sequence IN (
             SELECT sequence FROM events WHERE occurred_at < ? ORDER BY sequence LIMIT ?)`,
        ).run(beforeIso, limit).changes,
    );
  }
}
