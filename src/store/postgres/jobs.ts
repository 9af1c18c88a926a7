/**
 * Jobs on PostgreSQL, shared by several replicas. A claim is one statement:
 *   UPDATE jobs SET lease ... WHERE id = (SELECT id ... FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING *
 * so two replicas never claim the same job and neither waits for the other's row lock. Every other
 * change is conditional on still holding the lease.
 */
import type pg from 'pg';
import { jobFromRow } from '../job-rows.js';
import { type ClaimInput, type JobRecord, type JobsRepository, jobId, type NewJob } from '../jobs-port.js';
import type { Row } from '../rows.js';
import type { PgTransaction } from './transaction.js';

export async function insertJobIn(client: pg.PoolClient, job: NewJob): Promise<void> {
  await client.query(
    `INSERT INTO jobs (id, kind, payload, state, run_after) VALUES ($1, $2, $3, 'pending', $4) ON CONFLICT (id) DO NOTHING`,
    [jobId(job.kind, job.resourceId), job.kind, JSON.stringify({ resourceId: job.resourceId }), job.runAfter],
  );
}

export class PostgresJobs implements JobsRepository {
  constructor(private readonly transaction: PgTransaction) {}

  async enqueue(job: NewJob): Promise<void> {
    await this.transaction((client) => insertJobIn(client, job));
  }

  async claim(input: ClaimInput): Promise<JobRecord | undefined> {
    return this.transaction(async (client) => {
      const result = await client.query<Row>(
        `UPDATE jobs SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1
         WHERE id = (
           SELECT id FROM jobs
           WHERE state = 'pending' AND run_after <= $3 AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
           ORDER BY run_after, id
           FOR UPDATE SKIP LOCKED
           LIMIT 1
         )
         RETURNING *`,
        [input.owner, input.now + input.leaseMs, input.now],
      );
      const row = result.rows[0];
      return row ? jobFromRow(row) : undefined;
    });
  }

  private async changed(text: string, values: unknown[]): Promise<number> {
    return this.transaction(async (client) => (await client.query(text, values)).rowCount ?? 0);
  }

  async renew(id: string, owner: string, leaseExpiresAt: number): Promise<boolean> {
    return (
      (await this.changed(
        "UPDATE jobs SET lease_expires_at = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'pending'",
        [leaseExpiresAt, id, owner],
      )) === 1
    );
  }

  async release(id: string, owner: string, runAfter: number): Promise<boolean> {
    return (
      (await this.changed(
        "UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL, run_after = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'pending'",
        [runAfter, id, owner],
      )) === 1
    );
  }

  async complete(id: string, owner: string): Promise<boolean> {
    return (
      (await this.changed(
        "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2",
        [id, owner],
      )) === 1
    );
  }

  async releaseForeignLeases(liveOwner: string): Promise<number> {
    return this.changed(
      "UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE state = 'pending' AND lease_owner IS NOT NULL AND lease_owner <> $1",
      [liveOwner],
    );
  }

  async get(id: string): Promise<JobRecord | undefined> {
    return this.transaction(async (client) => {
      const row = (await client.query<Row>('SELECT * FROM jobs WHERE id = $1', [id])).rows[0];
      return row ? jobFromRow(row) : undefined;
    });
  }

  async pruneDone(before: number): Promise<number> {
    return this.changed("DELETE FROM jobs WHERE state = 'done' AND run_after < $1", [before]);
  }
}
