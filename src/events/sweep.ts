/**
 * The events sweep (a recurring job of the worker, so one replica runs each pass): writes
 * run.expired and key.expired for the Runs and keys whose expiry passed since the last pass (each
 * once: the store marks them in the same transaction), and deletes events older than the retention
 * in bounded batches. Both are bounded per pass; a backlog is finished by the next passes.
 */
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/port.js';

/** Rows per statement, and statements per pass, for each of the two tasks. */
const BATCH = 500;
const BATCHES_PER_PASS = 20;
const DAY_MS = 86_400_000;

export interface EventsSweepSettings {
  retentionDays: number;
}

export async function sweepEvents(
  store: Store,
  clock: Clock,
  logger: Logger,
  settings: EventsSweepSettings,
): Promise<{ expirations: number; deleted: number }> {
  const now = clock.now();
  const nowIso = new Date(now).toISOString();
  let expirations = 0;
  for (let pass = 0; pass < BATCHES_PER_PASS; pass++) {
    const written = await store.events.noteExpirations(nowIso, BATCH);
    expirations += written;
    if (written < BATCH) break;
  }
  const before = new Date(now - settings.retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (let pass = 0; pass < BATCHES_PER_PASS; pass++) {
    const removed = await store.events.deleteEventsBefore(before, BATCH);
    deleted += removed;
    if (removed < BATCH) break;
  }
  if (expirations + deleted > 0) logger.info({ expirations, deleted }, 'events sweep');
  return { expirations, deleted };
}
