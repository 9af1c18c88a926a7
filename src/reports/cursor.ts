/**
 * Opaque list cursors: base64url of a small JSON position, tagged with the list it belongs to so a
 * cursor of one list (or a hand-made one) is a 400 naming `cursor`, never a 500.
 */
import type { CreatedPosition } from '../store/reports-port.js';
import { badParameter } from './params.js';

export type CursorKind = 'work_units' | 'runs' | 'outcomes' | 'attempts';

export function encodeCursor(kind: CursorKind, position: unknown): string {
  return Buffer.from(JSON.stringify({ k: kind, p: position })).toString('base64url');
}

function decode(kind: CursorKind, cursor: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badParameter('cursor', 'not a cursor this list returned.');
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { k?: unknown }).k !== kind) {
    throw badParameter('cursor', 'not a cursor this list returned.');
  }
  return (parsed as { p?: unknown }).p;
}

export function decodeCreatedCursor(kind: CursorKind, cursor: string): CreatedPosition {
  const position = decode(kind, cursor) as Partial<CreatedPosition> | null;
  if (
    typeof position?.createdAt !== 'string' ||
    typeof position.id !== 'string' ||
    Number.isNaN(Date.parse(position.createdAt))
  ) {
    throw badParameter('cursor', 'not a cursor this list returned.');
  }
  return { createdAt: position.createdAt, id: position.id };
}

export function decodeSequenceCursor(kind: CursorKind, cursor: string): number {
  const position = decode(kind, cursor);
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
    throw badParameter('cursor', 'not a cursor this list returned.');
  }
  return position;
}
