/**
 * Background jobs with leases (store sub-port). A job is claimed by one worker at a time: the claim
 * sets lease_owner and lease_expires_at in one conditional update (PostgreSQL: `UPDATE ... WHERE id
 * = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1)`, SQLite: one immediate transaction). A worker
 * renews its lease while it works; a lease that passes (the process died) makes the job claimable
 * again, so a killed process's jobs resume elsewhere or after a restart. Handlers are idempotent.
 *
 * Times are epoch milliseconds. A job's id names the resource it drives (`batch:<id>`), so enqueuing
 * the same work twice is a no-op.
 */

/** `sweep`: a recurring maintenance pass (resourceId = its name), run by one replica at a time. */
export type JobKind = 'batch' | 'response' | 'sweep';

export interface JobRecord {
  id: string;
  kind: JobKind;
  /** The resource id the job drives. */
  resourceId: string;
  state: 'pending' | 'done';
  runAfter: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  attempts: number;
}

export interface NewJob {
  kind: JobKind;
  resourceId: string;
  runAfter: number;
}

export function jobId(kind: JobKind, resourceId: string): string {
  return `${kind}:${resourceId}`;
}

export interface ClaimInput {
  owner: string;
  now: number;
  leaseMs: number;
}

export interface JobsRepository {
  /** Inserts a pending job; an existing job with the same id is left unchanged. */
  enqueue(job: NewJob): Promise<void>;
  /** Claims one due job (pending, run_after <= now, no live lease), oldest first. */
  claim(input: ClaimInput): Promise<JobRecord | undefined>;
  /** Extends the lease; false when the lease is no longer ours (it passed and another took the job). */
  renew(id: string, owner: string, leaseExpiresAt: number): Promise<boolean>;
  /** Gives the job back to run again at `runAfter` (lease cleared); false when not ours. */
  release(id: string, owner: string, runAfter: number): Promise<boolean>;
  /** Marks the job done; false when not ours. */
  complete(id: string, owner: string): Promise<boolean>;
  /** Clears every lease not held by `liveOwner` (SQLite: the previous process died). Returns how many. */
  releaseForeignLeases(liveOwner: string): Promise<number>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Deletes done jobs whose run_after is before `before`; returns how many. */
  pruneDone(before: number): Promise<number>;
}
