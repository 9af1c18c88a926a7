/**
 * The events outbox on SQLite (Store.events, docs/events.md). appendEventsIn is what the store's
 * other writes call inside their own transaction, so an event commits with the change that caused
 * it; an event whose dedupe key exists already is ignored (INSERT OR IGNORE on the unique key).
 */
import type Database from 'better-sqlite3';
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

  async noteExpirations(nowIso: string, limit: number): Promise<number> {
    return this.transaction(() => {
      const runs = this.sql(
        `SELECT * FROM runs WHERE status = 'active' AND expiry_noted = 0 AND expires_at <= ?
         ORDER BY expires_at LIMIT ?`,
      ).all(nowIso, limit) as Row[];
      const keys = this.sql(
        `SELECT id, project_id, label, expires_at FROM gateway_keys
         WHERE expires_at IS NOT NULL AND revoked_at IS NULL AND expiry_noted = 0 AND expires_at <= ?
         ORDER BY expires_at LIMIT ?`,
      ).all(nowIso, limit) as Row[];
      const events: NewEvent[] = [];
      for (const row of runs) {
        this.sql('UPDATE runs SET expiry_noted = 1 WHERE id = ?').run(row.id);
        events.push(runExpiredEvent(runFromRow(row), nowIso));
      }
      for (const row of keys) {
        this.sql('UPDATE gateway_keys SET expiry_noted = 1 WHERE id = ?').run(row.id);
        events.push(
          keyExpiredEvent(
            {
              id: String(row.id),
              projectId: String(row.project_id),
              label: row.label === null ? null : String(row.label),
              expiresAt: String(row.expires_at),
            },
            nowIso,
          ),
        );
      }
      return appendEventsIn(this.sql, events);
    });
  }

  async deleteEventsBefore(beforeIso: string, limit: number): Promise<number> {
    return this.transaction(() => {
      return this.sql(
        `DELETE FROM events WHERE sequence IN (
           SELECT sequence FROM events WHERE occurred_at < ? ${KEEP_OWED_EVENTS}
           ORDER BY sequence LIMIT ?)`,
      ).run(beforeIso, limit).changes;
    });
  }
}
