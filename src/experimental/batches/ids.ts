/** Ids and object keys of batches: the translated upstream payload is kept as `<batch id>.payload`. */
import { newId, randomBase32 } from '../../lib/ids.js';
import type { Ids } from './translate.js';

export const payloadKey = (batchId: string) => `${batchId}.payload`;

export function newIds(): Ids {
  return { requestId: () => `batch_req_${randomBase32(26)}`, messageId: () => newId('msg') };
}
