/** Row -> JobRecord, shared by both adapters (BIGINT columns arrive as strings from PostgreSQL). */
import type { JobKind, JobRecord } from './jobs-port.js';
import type { Row } from './rows.js';

export function jobFromRow(row: Row): JobRecord {
  const payload = JSON.parse(String(row.payload)) as { resourceId: string };
  return {
    id: String(row.id),
    kind: String(row.kind) as JobKind,
    resourceId: payload.resourceId,
    state: String(row.state) as JobRecord['state'],
    runAfter: Number(row.run_after),
    leaseOwner: row.lease_owner === null ? null : String(row.lease_owner),
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    attempts: Number(row.attempts),
  };
}
