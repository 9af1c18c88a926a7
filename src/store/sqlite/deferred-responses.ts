/**
 * Deferred responses on SQLite: the record is one JSON document beside the columns the reaper
 * and the Project check read. Every state change reads, checks the expected status and writes in
 * one immediate transaction (single writer), so a cancel racing the job has exactly one winner.
 */
import type Database from 'better-sqlite3';
import {
  type DeferredPatch,
  type DeferredResponseRecord,
  type DeferredResponsesRepository,
  type DeferredStatus,
  FINISHED_STATUSES,
} from '../deferred-responses-port.js';
import { responseFinishedEvent } from '../event-builders.js';
import type { Row } from '../rows.js';
import { appendEventsIn } from './events.js';
import { insertJob } from './jobs.js';
import type { SqliteTransaction } from './transaction.js';

const parse = (row: Row | undefined): DeferredResponseRecord | undefined =>
  row ? (JSON.parse(String(row.record)) as DeferredResponseRecord) : undefined;

export class SqliteDeferredResponses implements DeferredResponsesRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly tx: SqliteTransaction,
  ) {}

  async create(record: DeferredResponseRecord, jobRunAfter: number): Promise<void> {
    this.tx(() => {
      this.db
        .prepare(
          'INSERT INTO deferred_responses (id, project_id, status, reap_at, record) VALUES (?, ?, ?, ?, ?)',
        )
        .run(record.id, record.projectId, record.status, record.reapAt, JSON.stringify(record));
      insertJob(this.db, { kind: 'response', resourceId: record.id, runAfter: jobRunAfter });
    });
  }

  async get(projectId: string, id: string): Promise<DeferredResponseRecord | undefined> {
    return this.tx(() =>
      parse(
        this.db
          .prepare('SELECT record FROM deferred_responses WHERE id = ? AND project_id = ?')
          .get(id, projectId) as Row | undefined,
      ),
    );
  }

  async getById(id: string): Promise<DeferredResponseRecord | undefined> {
    return this.tx(() =>
      parse(this.db.prepare('SELECT record FROM deferred_responses WHERE id = ?').get(id) as Row | undefined),
    );
  }

  async update(
    id: string,
    fromStatuses: readonly DeferredStatus[],
    patch: DeferredPatch,
  ): Promise<DeferredResponseRecord | undefined> {
    return this.tx(() => {
      const current = parse(
        this.db.prepare('SELECT record FROM deferred_responses WHERE id = ?').get(id) as Row | undefined,
      );
      if (!current || !fromStatuses.includes(current.status)) return undefined;
      const next: DeferredResponseRecord = { ...current, ...patch };
      this.db
        .prepare('UPDATE deferred_responses SET status = ?, reap_at = ?, record = ? WHERE id = ?')
        .run(next.status, next.reapAt, JSON.stringify(next), id);
      const finished = responseFinishedEvent(current.status, next, Date.now());
      if (finished) appendEventsIn((text) => this.db.prepare(text), [finished]);
      return next;
    });
  }

  async deleteFinished(projectId: string, id: string): Promise<DeferredResponseRecord | undefined> {
    return this.tx(() => {
      const current = parse(
        this.db
          .prepare('SELECT record FROM deferred_responses WHERE id = ? AND project_id = ?')
          .get(id, projectId) as Row | undefined,
      );
      if (!current || !FINISHED_STATUSES.includes(current.status)) return undefined;
      this.db.prepare('DELETE FROM deferred_responses WHERE id = ?').run(id);
      this.db.prepare('DELETE FROM jobs WHERE id = ?').run(`response:${id}`);
      return current;
    });
  }

  async listDue(now: number, limit: number): Promise<DeferredResponseRecord[]> {
    const rows = this.tx(
      () =>
        this.db
          .prepare('SELECT record FROM deferred_responses WHERE reap_at <= ? ORDER BY reap_at LIMIT ?')
          .all(now, limit) as Row[],
    );
    return rows.map((row) => parse(row)!);
  }

  async delete(id: string): Promise<void> {
    this.tx(() => {
      this.db.prepare('DELETE FROM deferred_responses WHERE id = ?').run(id);
      this.db.prepare('DELETE FROM jobs WHERE id = ?').run(`response:${id}`);
    });
  }
}
