/**
 * The object sweep. Objects belong to owners named by their key prefix (`file_` keys belong to the
 * files resource; other features register their own prefix). One pass:
 *   1. removes temporary parts older than the grace period (writes killed mid-way);
 *   2. asks each owner to expire its own records (a file past its TTL: upstream copy, content and
 *      record go) - owners do this through their services, so the rules stay in one place;
 *   3. deletes every object older than the grace period whose owner says no record references it
 *      (content written by an upload that died before its record was committed, or left behind by
 *      a deletion interrupted between the record and the content).
 * The grace period keeps the sweep away from uploads still in progress: their object is written
 * before their record. Objects with a key no owner claims are left alone and counted.
 */
import type { ObjectStore } from './port.js';

export interface ObjectOwner {
  /** Key prefix this owner's objects carry, e.g. 'file_'. */
  prefix: string;
  /** Whether a live record still references the object (or, for owners that expire by time, whether it is still within its retention at `nowMs`). */
  referenced(projectId: string, key: string, nowMs: number): Promise<boolean>;
  /** Expires this owner's records past their TTL (and their objects); returns how many. */
  expire?(nowMs: number): Promise<number>;
}

export interface SweepResult {
  staleParts: number;
  expired: number;
  orphans: number;
  unclaimed: number;
}

export interface SweepOptions {
  objects: ObjectStore;
  owners: readonly ObjectOwner[];
  nowMs: number;
  /** Objects and parts younger than this are never removed as orphans. */
  graceMs: number;
}

export async function sweepObjects(options: SweepOptions): Promise<SweepResult> {
  const result: SweepResult = { staleParts: 0, expired: 0, orphans: 0, unclaimed: 0 };
  result.staleParts = await options.objects.removeStaleParts(options.graceMs, options.nowMs);
  for (const owner of options.owners) {
    if (owner.expire) result.expired += await owner.expire(options.nowMs);
  }
  for await (const object of options.objects.list()) {
    const owner = options.owners.find((candidate) => object.key.startsWith(candidate.prefix));
    if (!owner) {
      result.unclaimed += 1;
      continue;
    }
    if (options.nowMs - object.modifiedMs < options.graceMs) continue;
    if (await owner.referenced(object.projectId, object.key, options.nowMs)) continue;
    if (await options.objects.delete(object.projectId, object.key)) result.orphans += 1;
  }
  return result;
}
