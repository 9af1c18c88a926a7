/**
 * Which profiles serve the experimental endpoints. Batches: the wires with an upstream batch API;
 * responses: the responses wire. The media endpoints (embeddings, speech, transcriptions, images,
 * moderations): the chat-embeddings family, whose upstreams expose them on the chat-completions
 * wire. Files are served by every chat-completions profile (uploaded upstream) and every
 * vendora-wire profile (stored only).
 */
import type { PrimitiveName } from '../primitives/shared/types.js';
import type { ProfileId, ProfileRow } from './profiles.js';

export const MEDIA_PROFILES: readonly ProfileId[] = [
  'vendorb.chat-embeddings.v1',
  'vendorc.chat-embeddings.v1',
  'compat.chat-embeddings.v1',
];

export const FILE_PRIMITIVES: readonly PrimitiveName[] = ['chat-completions', 'messages'];

/** Wires with an upstream batch API: vendora message batches and chat batches. */
export const BATCH_PRIMITIVES: readonly PrimitiveName[] = ['messages', 'chat-completions'];

export type ResourceEndpoint =
  | 'batches'
  | 'responses'
  | 'files'
  | 'audio.speech'
  | 'audio.transcriptions'
  | 'images.generations'
  | 'moderations'
  | 'embeddings';

export function servesResource(row: ProfileRow, endpoint: ResourceEndpoint): boolean {
  switch (endpoint) {
    case 'batches':
      return BATCH_PRIMITIVES.includes(row.primitive);
    case 'responses':
      return row.primitive === 'responses';
    case 'files':
      return FILE_PRIMITIVES.includes(row.primitive);
    case 'audio.speech':
    case 'audio.transcriptions':
    case 'images.generations':
    case 'moderations':
    case 'embeddings':
      return (MEDIA_PROFILES as readonly string[]).includes(row.id);
    default: {
      const never: never = endpoint;
      throw new Error(`unknown endpoint ${String(never)}`);
    }
  }
}
