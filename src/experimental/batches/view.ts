/** The batch record as the client reads it (vendorb wire: `object: 'batch'`, unix-second times). Pure. */
import { unixSeconds } from '../../lib/clock.js';
import type { BatchRecord } from '../../store/batches-port.js';

const seconds = (value: number | null) => (value === null ? null : unixSeconds(value));

export function batchView(batch: BatchRecord): Record<string, unknown> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: unixSeconds(batch.createdAt),
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: unixSeconds(batch.expiresAt),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: batch.requestCounts,
    metadata: batch.metadata,
    errors: batch.errors === null ? null : { object: 'list', data: batch.errors },
  };
}
