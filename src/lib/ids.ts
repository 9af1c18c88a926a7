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

export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let text = '';
  for (let index = 0; index < length; index++) text += CROCKFORD[bytes[index]! & 31];
  return text;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase32(26)}`;
}
