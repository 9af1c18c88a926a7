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
  | 'call'
  | 'file'
  | 'batch'
  | 'resp'
  | 'msg'
  | 'req'
  | 'prj'
  | 'evt'
  | 'whe'
  | 'whd';

/** Random bytes are drawn from a pool refilled 4 KiB at a time: one syscall per ~150 ids, not one per id. */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/**
 * Characters are written as bytes into this buffer and read out as one string: a call makes three
 * ids, and adding characters one at a time built 26 intermediate strings for each.
 */
const ALPHABET = Buffer.from(CROCKFORD, 'latin1');
let scratch = Buffer.alloc(64);

function scratchOf(length: number): Buffer {
  if (length > scratch.length) scratch = Buffer.alloc(length);
  return scratch;
}

export function randomBase32(length: number): string {
  if (offset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const out = scratchOf(length);
  for (let index = 0; index < length; index++) out[index] = ALPHABET[pool[offset + index]! & 31]!;
  offset += length;
  return out.toString('latin1', 0, length);
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
  const out = scratchOf(10);
  let rest = Math.max(0, Math.floor(nowMs));
  for (let index = 9; index >= 0; index--) {
    out[index] = ALPHABET[rest % 32]!;
    rest = Math.floor(rest / 32);
  }
  const time = out.toString('latin1', 0, 10);
  return `${prefix}_${time}${randomBase32(16)}`;
}

/**
 * The creation time (milliseconds) of an id made by newTimeOrderedId, or undefined when `id` does
 * not have that shape (a random id, a foreign string). Object keys derived from attempt ids read it.
 */
export function timeOfTimeOrderedId(id: string): number | undefined {
  const underscore = id.indexOf('_');
  if (underscore < 1 || id.length !== underscore + 27) return undefined;
  let time = 0;
  for (let index = underscore + 1; index < underscore + 11; index++) {
    const value = CROCKFORD.indexOf(id[index]!);
    if (value < 0) return undefined;
    time = time * 32 + value;
  }
  for (let index = underscore + 11; index < id.length; index++)
    if (!CROCKFORD.includes(id[index]!)) return undefined;
  return time;
}
