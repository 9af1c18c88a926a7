/**
 * Webhooks on SQLite (Store.webhooks; store/webhooks-port.ts). One process writes, each operation
 * is one immediate transaction, so a claim (the ordering and per-endpoint checks, then the lease)
 * is exact without row locks. Idempotent writes run in the store's idempotency runner.
 */
import type Database from 'better-sqlite3';
import { GatewayError } from '../../errors/gateway-error.js';
import { eventFromRow } from '../event-rows.js';
import type { EventRecord, Idempotency, IdempotentResult, Render } from '../records.js';
import type { Row } from '../rows.js';
import {
  attemptFromRow,
  DELIVERY_COLUMNS,
  deliveryFromRow,
  deliveryValues,
  ENDPOINT_COLUMNS,
  endpointFromRow,
  endpointValues,
  NO_EARLIER_OPEN,
} from '../webhook-rows.js';
import type {
  ClaimDeliveryInput,
  ClaimedDelivery,
  DeliveryAttemptRecord,
  DeliveryPageQuery,
  FinishAttemptInput,
  NewWebhookDelivery,
  NewWebhookEndpoint,
  RedeliverInput,
  RotateSecretInput,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhooksRepository,
} from '../webhooks-port.js';
import type { SqliteIdempotent } from './keys.js';
import type { Sql, SqliteTransaction } from './transaction.js';

type Write<T> = { record: T; status: 200 | 201 };

const endpointNotFound = () => new GatewayError('webhook_endpoint_not_found', 'Webhook endpoint not found.');
const deliveryNotFound = () => new GatewayError('webhook_delivery_not_found', 'Webhook delivery not found.');

export class SqliteWebhooks implements WebhooksRepository {
  constructor(
    private readonly sql: Sql,
    private readonly db: Database.Database,
    private readonly transaction: SqliteTransaction,
    private readonly idempotent: SqliteIdempotent,
  ) {}

  private run<T>(
    idempotency: Idempotency | null,
    render: Render<T>,
    write: () => Write<T>,
  ): IdempotentResult {
    if (idempotency) return this.idempotent(idempotency, render, write);
    return this.transaction(() => {
      const { record, status } = write();
      return { status, replayed: false, body: render(record) };
    });
  }

  private endpoint(projectId: string, id: string): WebhookEndpointRecord | undefined {
    const row = this.sql('SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ?').get(
      id,
      projectId,
    );
    return row ? endpointFromRow(row as Row) : undefined;
  }

  async createEndpoint(
    endpoint: NewWebhookEndpoint,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      this.sql(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        ...endpointValues(endpoint),
      );
      return { record: this.endpoint(endpoint.projectId, endpoint.id)!, status: 201 };
    });
  }

  async upsertConfiguredEndpoint(endpoint: NewWebhookEndpoint, previousExpiresAt: number): Promise<void> {
    this.transaction(() => {
      const existing = this.sql('SELECT * FROM webhook_endpoints WHERE id = ?').get(endpoint.id) as
        | Row
        | undefined;
      if (!existing) {
        this.sql(
          `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(...endpointValues(endpoint));
        return;
      }
      const rotated = String(existing.secret) !== endpoint.secret;
      this.sql(
        `UPDATE webhook_endpoints SET project_id = ?, url = ?, description = ?, event_types = ?, source = 'config',
           state = 'active', secret = ?, previous_secret = ?, previous_secret_expires_at = ? WHERE id = ?`,
      ).run(
        endpoint.projectId,
        endpoint.url,
        endpoint.description,
        endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
        endpoint.secret,
        rotated ? existing.secret : existing.previous_secret,
        rotated ? previousExpiresAt : existing.previous_secret_expires_at,
        endpoint.id,
      );
    });
  }

  async disableConfiguredEndpointsExcept(keep: string[]): Promise<number> {
    return this.transaction(() => {
      const rows = this.sql(
        "SELECT id FROM webhook_endpoints WHERE source = 'config' AND state = 'active'",
      ).all() as Row[];
      let changed = 0;
      for (const row of rows) {
        if (keep.includes(String(row.id))) continue;
        changed += this.sql("UPDATE webhook_endpoints SET state = 'disabled' WHERE id = ?").run(
          row.id,
        ).changes;
      }
      return changed;
    });
  }

  async getEndpoint(projectId: string, id: string): Promise<WebhookEndpointRecord | undefined> {
    return this.transaction(() => this.endpoint(projectId, id));
  }

  async listEndpoints(projectId: string): Promise<WebhookEndpointRecord[]> {
    const rows = this.sql('SELECT * FROM webhook_endpoints WHERE project_id = ? ORDER BY created_at, id').all(
      projectId,
    ) as Row[];
    return rows.map(endpointFromRow);
  }

  async listActiveEndpoints(): Promise<WebhookEndpointRecord[]> {
    const rows = this.sql(
      "SELECT * FROM webhook_endpoints WHERE state = 'active' ORDER BY id",
    ).all() as Row[];
    return rows.map(endpointFromRow);
  }

  async deleteEndpoint(
    projectId: string,
    id: string,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      const endpoint = this.endpoint(projectId, id);
      if (!endpoint) throw endpointNotFound();
      this.sql('DELETE FROM webhook_endpoints WHERE id = ?').run(id);
      return { record: endpoint, status: 200 };
    });
  }

  async rotateSecret(
    input: RotateSecretInput,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      const endpoint = this.endpoint(input.projectId, input.id);
      if (!endpoint) throw endpointNotFound();
      this.sql(
        'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ? WHERE id = ?',
      ).run(input.previousExpiresAt, input.secret, input.id);
      return { record: this.endpoint(input.projectId, input.id)!, status: 201 };
    });
  }

  async eventsToFanOut(limit: number): Promise<EventRecord[]> {
    const rows = this.sql(
      `SELECT e.* FROM events e
       WHERE e.sequence > (SELECT watermark FROM webhook_dispatch WHERE name = 'events')
         AND NOT EXISTS (SELECT 1 FROM webhook_fanned_out f WHERE f.event_sequence = e.sequence)
       ORDER BY e.sequence LIMIT ?`,
    ).all(limit) as Row[];
    return rows.map(eventFromRow);
  }

  async recordFanOut(sequences: number[], deliveries: NewWebhookDelivery[], fannedAt: number): Promise<void> {
    this.transaction(() => {
      const insertDelivery = this.sql(
        `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (endpoint_id, event_sequence) DO NOTHING`,
      );
      for (const delivery of deliveries) insertDelivery.run(...deliveryValues(delivery));
      const mark = this.sql(
        'INSERT INTO webhook_fanned_out (event_sequence, fanned_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
      );
      for (const sequence of sequences) mark.run(sequence, fannedAt);
    });
  }

  async advanceWatermark(settledBefore: number): Promise<number> {
    return this.transaction(() => {
      const current = Number(
        (this.sql("SELECT watermark FROM webhook_dispatch WHERE name = 'events'").get() as Row).watermark,
      );
      const settled = (
        this.sql('SELECT max(event_sequence) AS sequence FROM webhook_fanned_out WHERE fanned_at < ?').get(
          settledBefore,
        ) as Row
      ).sequence;
      if (settled === null || settled === undefined) return current;
      const waiting = (
        this.sql(
          `SELECT min(e.sequence) AS sequence FROM events e WHERE e.sequence > ?
           AND NOT EXISTS (SELECT 1 FROM webhook_fanned_out f WHERE f.event_sequence = e.sequence)`,
        ).get(current) as Row
      ).sequence;
      let next = Number(settled);
      if (waiting !== null && waiting !== undefined) next = Math.min(next, Number(waiting) - 1);
      if (next <= current) return current;
      this.sql("UPDATE webhook_dispatch SET watermark = ? WHERE name = 'events'").run(next);
      this.sql('DELETE FROM webhook_fanned_out WHERE event_sequence <= ?').run(next);
      return next;
    });
  }

  async claimDelivery(input: ClaimDeliveryInput): Promise<ClaimedDelivery | undefined> {
    return this.transaction(() => {
      const row = this.sql(
        `SELECT d.id FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.state = 'active'
         WHERE (d.state = 'pending' OR d.state = 'delivering') AND d.next_attempt_at <= ?
           AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ?)
           AND ${NO_EARLIER_OPEN}
           AND (SELECT count(*) FROM webhook_deliveries c WHERE c.endpoint_id = d.endpoint_id
                AND c.state = 'delivering' AND c.lease_expires_at > ?) < ?
         ORDER BY d.next_attempt_at, d.event_sequence LIMIT 1`,
      ).get(input.now, input.now, input.now, input.maxPerEndpoint) as Row | undefined;
      if (!row) return undefined;
      const claimed = this.sql(
        `UPDATE webhook_deliveries SET state = 'delivering', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1
         WHERE id = ? RETURNING *`,
      ).get(input.owner, input.now + input.leaseMs, row.id) as Row;
      const delivery = deliveryFromRow(claimed);
      const endpoint = this.endpoint(delivery.projectId, delivery.endpointId)!;
      const event = this.sql('SELECT * FROM events WHERE sequence = ?').get(delivery.eventSequence) as
        | Row
        | undefined;
      return { delivery, endpoint, event: event ? eventFromRow(event) : undefined };
    });
  }

  async finishAttempt(input: FinishAttemptInput): Promise<boolean> {
    const { verdict, attempt } = input;
    return this.transaction(() => {
      const changed = this.sql(
        `UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, completed_at = ?, lease_owner = NULL,
           lease_expires_at = NULL, last_status = ?, last_error = ?, last_latency_ms = ?
         WHERE id = ? AND lease_owner = ? AND state = 'delivering'`,
      ).run(
        verdict.state,
        verdict.state === 'pending' ? verdict.nextAttemptAt : null,
        verdict.state === 'pending' ? null : input.now,
        attempt.status,
        attempt.error,
        attempt.latencyMs,
        input.deliveryId,
        input.owner,
      ).changes;
      if (changed !== 1) return false;
      this.sql(
        `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, status, error, latency_ms)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (delivery_id, attempt) DO UPDATE SET started_at = excluded.started_at,
           status = excluded.status, error = excluded.error, latency_ms = excluded.latency_ms`,
      ).run(
        attempt.deliveryId,
        attempt.attempt,
        attempt.startedAt,
        attempt.status,
        attempt.error,
        attempt.latencyMs,
      );
      this.sql('DELETE FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt <= ?').run(
        attempt.deliveryId,
        attempt.attempt - input.historyLimit,
      );
      return true;
    });
  }

  async countOpenDeliveries(): Promise<number> {
    const row = this.sql(
      "SELECT count(*) AS open FROM webhook_deliveries WHERE state = 'pending' OR state = 'delivering'",
    ).get() as Row;
    return Number(row.open);
  }

  async pruneDeliveries(limit: number): Promise<number> {
    return this.transaction(
      () =>
        this.sql(
          `DELETE FROM webhook_deliveries WHERE id IN (
             SELECT d.id FROM webhook_deliveries d
             WHERE (d.state = 'succeeded' OR d.state = 'failed')
               AND NOT EXISTS (SELECT 1 FROM events e WHERE e.sequence = d.event_sequence)
             LIMIT ?)`,
        ).run(limit).changes,
    );
  }

  async listDeliveries(
    projectId: string,
    endpointId: string,
    query: DeliveryPageQuery,
  ): Promise<WebhookDeliveryRecord[]> {
    const where = ['project_id = ?', 'endpoint_id = ?'];
    const params: unknown[] = [projectId, endpointId];
    if (query.state !== undefined) {
      where.push('state = ?');
      params.push(query.state);
    }
    if (query.beforeId !== undefined) {
      where.push(
        '(created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?)',
      );
      params.push(query.beforeId, endpointId);
    }
    params.push(query.limit);
    const rows = this.db
      .prepare(
        `SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(...params) as Row[];
    return rows.map(deliveryFromRow);
  }

  async getDelivery(
    projectId: string,
    endpointId: string,
    id: string,
  ): Promise<WebhookDeliveryRecord | undefined> {
    const row = this.sql(
      'SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ? AND project_id = ?',
    ).get(id, endpointId, projectId) as Row | undefined;
    return row ? deliveryFromRow(row) : undefined;
  }

  async listAttempts(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    const rows = this.sql(
      'SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt DESC',
    ).all(deliveryId) as Row[];
    return rows.map(attemptFromRow);
  }

  async redeliver(
    input: RedeliverInput,
    idempotency: Idempotency | null,
    render: Render<WebhookDeliveryRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, () => {
      if (!this.endpoint(input.projectId, input.endpointId)) throw endpointNotFound();
      const row = this.sql('SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?').get(
        input.deliveryId,
        input.endpointId,
      ) as Row | undefined;
      if (!row) throw deliveryNotFound();
      const delivery = deliveryFromRow(row);
      if (delivery.state === 'delivering' && (delivery.leaseExpiresAt ?? 0) > input.now)
        return { record: delivery, status: 200 };
      const updated = this.sql(
        `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, give_up_at = ?, completed_at = NULL,
           lease_owner = NULL, lease_expires_at = NULL WHERE id = ? RETURNING *`,
      ).get(input.now, input.giveUpAt, input.deliveryId) as Row;
      return { record: deliveryFromRow(updated), status: 201 };
    });
  }
}
