/** Opaque identifiers: a prefix and 26 random Crockford base32 characters (130 random bits). */
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix =
  | 'wku'
  | 'run'
  | 'out'
  | 'odef'
  | 'key'
  | 'att'
  | 'file'
  | 'batch'
  | 'resp'
  | 'msg'
  | 'req'
  | 'prj';

/** Random bytes are drawn from a pool refilled 4 KiB at a time: one syscall per ~150 ids, not one per id. */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

export function randomBase32(length: number): string {
  if (offset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  let text = '';
  for (let index = 0; index < length; index++) text += CROCKFORD[pool[offset + index]! & 31];
  offset += length;
  return text;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase32(26)}`;
}

/**
 * An id whose first 10 characters are the creation time in milliseconds (Crockford base32, so ids
 * sort by time) and whose last 16 are random (80 bits). Same shape as newId. Used for attempts: the
 * ledger inserts one per call into indexed tables (attempts, audit), and keys that arrive in time
 * order land on the same index pages, so a group commit writes a few pages instead of one per call.
 */
export function newTimeOrderedId(prefix: IdPrefix, nowMs: number): string {
  let time = '';
  let rest = Math.max(0, Math.floor(nowMs));
  for (let index = 0; index < 10; index++) {
    time = CROCKFORD[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return `${prefix}_${time}${randomBase32(16)}`;
}
