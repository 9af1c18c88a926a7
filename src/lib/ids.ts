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
