/**
 * What the client reads (pure): the deferred response record in the vendorb wire shape (`object:
 * 'response'`, unix-second times), and the deletion answer. `output` comes from the sealed result
 * object once the response finished; before that it is empty.
 */
import { unixSeconds } from '../../lib/clock.js';
import type { DeferredResponseRecord } from '../../store/deferred-responses-port.js';

/** The content of the sealed result object. */
export interface StoredResult {
  output: unknown[];
  incomplete_details: unknown;
}

export function responseView(
  record: DeferredResponseRecord,
  result: StoredResult | undefined,
): Record<string, unknown> {
  return {
    id: record.id,
    object: 'response',
    created_at: unixSeconds(record.createdAt),
    completed_at: record.completedAt === null ? null : unixSeconds(record.completedAt),
    status: record.status,
    background: true,
    error: record.error,
    incomplete_details: result?.incomplete_details ?? null,
    model: record.model,
    output: result?.output ?? [],
    usage: record.usage,
    store: false,
  };
}

export function deletedView(id: string): Record<string, unknown> {
  return { id, object: 'response', deleted: true };
}
