/**
 * Captures as an owner of the object sweep (objects/sweep.ts): a `cap_` object is referenced while
 * its Project's retention has not passed since the attempt in its key was created; past it (or
 * with a key this code did not make) the sweep deletes it. The sweep is one recurring job in the
 * store, so whichever replica claims a pass expires every replica's captures.
 */
import type { ObjectOwner } from '../objects/sweep.js';
import { CAPTURE_PREFIX, timeOfCaptureKey } from './capture-keys.js';
import type { CapturePolicy } from './capture-policy.js';

export function captureSweepOwner(policy: CapturePolicy): ObjectOwner {
  return {
    prefix: CAPTURE_PREFIX,
    async referenced(projectId, key, nowMs) {
      const timeMs = timeOfCaptureKey(key);
      if (timeMs === undefined) return false;
      return nowMs < timeMs + policy.of(projectId).retentionMs;
    },
  };
}
