/**
 * Jobs on SQLite. One process writes (the advisory lock file), so a claim is one immediate
 * transaction: pick the oldest due job without a live lease and take its lease.
 */
import type Database from 'better-sqlite3';
import { jobFromRow } from '../job-rows.js';
import { type ClaimInput, type JobRecord, type JobsRepository, jobId, type NewJob } from '../jobs-port.js';
import type { Row } from '../rows.js';
import type { SqliteTransaction } from './transaction.js';

/** Inserts a job inside the caller's transaction. */
export function insertJob(db: Database.Database, job: NewJob): void {
  db.prepare(
    `INSERT INTO jobs (id, kind, payload, state, run_after) VALUES (?, ?, ?, 'pending', ?) ON CONFLICT (id) DO NOTHING`,
  ).run(
    jobId(job.kind, job.resourceId),
    job.kind,
    JSON.stringify({ resourceId: job.resourceId }),
    job.runAfter,
  );
}

export class SqliteJobs implements JobsRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly tx: SqliteTransaction,
  ) {}

  async enqueue(job: NewJob): Promise<void> {
    this.tx(() => insertJob(this.db, job));
  }

  async claim(input: ClaimInput): Promise<JobRecord | undefined> {
    return this.tx(() => {
      const row = this.db
        .prepare(
          `SELECT id FROM jobs WHERE state = 'pending' AND run_after <= ? AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
           ORDER BY run_after, id LIMIT 1`,
        )
        .get(input.now, input.now) as Row | undefined;
      if (!row) return undefined;
      const claimed = this.db
        .prepare(
          'UPDATE jobs SET lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1 WHERE id = ? RETURNING *',
        )
        .get(input.owner, input.now + input.leaseMs, row.id) as Row;
      return jobFromRow(claimed);
    });
  }

  async renew(id: string, owner: string, leaseExpiresAt: number): Promise<boolean> {
    return this.tx(
      () =>
        this.db
          .prepare(
            "UPDATE jobs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND state = 'pending'",
          )
          .run(leaseExpiresAt, id, owner).changes === 1,
    );
  }

  async release(id: string, owner: string, runAfter: number): Promise<boolean> {
    return this.tx(
      () =>
        this.db
          .prepare(
            "UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL, run_after = ? WHERE id = ? AND lease_owner = ? AND state = 'pending'",
          )
          .run(runAfter, id, owner).changes === 1,
    );
  }

  async complete(id: string, owner: string): Promise<boolean> {
    return this.tx(
      () =>
        this.db
          .prepare(
            "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?",
          )
          .run(id, owner).changes === 1,
    );
  }

  async releaseForeignLeases(liveOwner: string): Promise<number> {
    return this.tx(
      () =>
        this.db
          .prepare(
            "UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE state = 'pending' AND lease_owner IS NOT NULL AND lease_owner <> ?",
          )
          .run(liveOwner).changes,
    );
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const row = this.tx(() => this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined);
    return row ? jobFromRow(row) : undefined;
  }

  async pruneDone(before: number): Promise<number> {
    return this.tx(
      () => this.db.prepare("DELETE FROM jobs WHERE state = 'done' AND run_after < ?").run(before).changes,
    );
  }
}
