/**
 * Webhooks on PostgreSQL (Store.webhooks; store/webhooks-port.ts), shared by several replicas.
 *
 * A claim first reads a few due candidates without locks, then takes one in a transaction that
 * locks its endpoint's row (`FOR UPDATE`): under that lock it counts the endpoint's live leases and
 * re-checks the delivery (still due, unleased, no earlier open delivery of its resource) in the
 * conditional UPDATE that takes the lease. Claims of one endpoint therefore serialise and the
 * per-endpoint bound holds across replicas; claims of different endpoints do not wait on each other.
 */
import type pg from 'pg';
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
import type { PostgresIdempotent } from './keys.js';
import type { PgTransaction } from './transaction.js';

type Client = pg.PoolClient;
type Query = (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;
type Write<T> = { record: T; status: 200 | 201 };

const endpointNotFound = () => new GatewayError('webhook_endpoint_not_found', 'Webhook endpoint not found.');
const deliveryNotFound = () => new GatewayError('webhook_delivery_not_found', 'Webhook delivery not found.');

/** Candidates read per claim; a claim that loses all of them to other replicas finds none this round. */
const CLAIM_CANDIDATES = 8;

const ENDPOINT_INSERT = `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`;

async function endpointRow(client: Client, projectId: string, id: string) {
  const row = (
    await client.query<Row>('SELECT * FROM webhook_endpoints WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ])
  ).rows[0];
  return row ? endpointFromRow(row) : undefined;
}

export class PostgresWebhooks implements WebhooksRepository {
  constructor(
    private readonly query: Query,
    private readonly transaction: PgTransaction,
    private readonly idempotent: PostgresIdempotent,
  ) {}

  private run<T>(
    idempotency: Idempotency | null,
    render: Render<T>,
    write: (client: Client) => Promise<Write<T>>,
  ): Promise<IdempotentResult> {
    if (idempotency) return this.idempotent(idempotency, render, write);
    return this.transaction(async (client) => {
      const { record, status } = await write(client);
      return { status, replayed: false, body: render(record) };
    });
  }

  async createEndpoint(
    endpoint: NewWebhookEndpoint,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      await client.query(ENDPOINT_INSERT, endpointValues(endpoint));
      return { record: (await endpointRow(client, endpoint.projectId, endpoint.id))!, status: 201 };
    });
  }

  async upsertConfiguredEndpoint(endpoint: NewWebhookEndpoint, previousExpiresAt: number): Promise<void> {
    await this.transaction(async (client) => {
      const existing = (
        await client.query<Row>('SELECT * FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint.id])
      ).rows[0];
      if (!existing) {
        await client.query(`${ENDPOINT_INSERT} ON CONFLICT (id) DO NOTHING`, endpointValues(endpoint));
        return;
      }
      const rotated = String(existing.secret) !== endpoint.secret;
      await client.query(
        `UPDATE webhook_endpoints SET project_id = $1, url = $2, description = $3, event_types = $4::jsonb,
           source = 'config', state = 'active', secret = $5, previous_secret = $6, previous_secret_expires_at = $7
         WHERE id = $8`,
        [
          endpoint.projectId,
          endpoint.url,
          endpoint.description,
          endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
          endpoint.secret,
          rotated ? existing.secret : existing.previous_secret,
          rotated ? previousExpiresAt : existing.previous_secret_expires_at,
          endpoint.id,
        ],
      );
    });
  }

  async disableConfiguredEndpointsExcept(keep: string[]): Promise<number> {
    const result = await this.query(
      `UPDATE webhook_endpoints SET state = 'disabled'
       WHERE source = 'config' AND state = 'active' AND NOT (id = ANY($1::text[]))`,
      [keep],
    );
    return result.rowCount ?? 0;
  }

  async getEndpoint(projectId: string, id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = (
      await this.query('SELECT * FROM webhook_endpoints WHERE id = $1 AND project_id = $2', [id, projectId])
    ).rows[0];
    return row ? endpointFromRow(row) : undefined;
  }

  async listEndpoints(projectId: string): Promise<WebhookEndpointRecord[]> {
    const result = await this.query(
      'SELECT * FROM webhook_endpoints WHERE project_id = $1 ORDER BY created_at, id',
      [projectId],
    );
    return result.rows.map(endpointFromRow);
  }

  async listActiveEndpoints(): Promise<WebhookEndpointRecord[]> {
    const result = await this.query("SELECT * FROM webhook_endpoints WHERE state = 'active' ORDER BY id", []);
    return result.rows.map(endpointFromRow);
  }

  async deleteEndpoint(
    projectId: string,
    id: string,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      const deleted = (
        await client.query<Row>(
          'DELETE FROM webhook_endpoints WHERE id = $1 AND project_id = $2 RETURNING *',
          [id, projectId],
        )
      ).rows[0];
      if (!deleted) throw endpointNotFound();
      return { record: endpointFromRow(deleted), status: 200 };
    });
  }

  async rotateSecret(
    input: RotateSecretInput,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      const updated = (
        await client.query<Row>(
          `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $1, secret = $2
           WHERE id = $3 AND project_id = $4 RETURNING *`,
          [input.previousExpiresAt, input.secret, input.id, input.projectId],
        )
      ).rows[0];
      if (!updated) throw endpointNotFound();
      return { record: endpointFromRow(updated), status: 201 };
    });
  }

  async eventsToFanOut(limit: number): Promise<EventRecord[]> {
    const result = await this.query(
      `SELECT e.* FROM events e
       WHERE e.sequence > (SELECT watermark FROM webhook_dispatch WHERE name = 'events')
         AND NOT EXISTS (SELECT 1 FROM webhook_fanned_out f WHERE f.event_sequence = e.sequence)
       ORDER BY e.sequence LIMIT $1`,
      [limit],
    );
    return result.rows.map(eventFromRow);
  }

  async recordFanOut(sequences: number[], deliveries: NewWebhookDelivery[], fannedAt: number): Promise<void> {
    await this.transaction(async (client) => {
      for (const delivery of deliveries) {
        await client.query(
          `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
           ON CONFLICT (endpoint_id, event_sequence) DO NOTHING`,
          deliveryValues(delivery),
        );
      }
      if (sequences.length > 0)
        await client.query(
          `INSERT INTO webhook_fanned_out (event_sequence, fanned_at)
           SELECT unnest($1::bigint[]), $2 ON CONFLICT DO NOTHING`,
          [sequences, fannedAt],
        );
    });
  }

  async advanceWatermark(settledBefore: number): Promise<number> {
    return this.transaction(async (client) => {
      const current = Number(
        (await client.query<Row>("SELECT watermark FROM webhook_dispatch WHERE name = 'events' FOR UPDATE"))
          .rows[0]!.watermark,
      );
      const settled = (
        await client.query<Row>(
          'SELECT max(event_sequence) AS sequence FROM webhook_fanned_out WHERE fanned_at < $1',
          [settledBefore],
        )
      ).rows[0]!.sequence;
      if (settled === null || settled === undefined) return current;
      const waiting = (
        await client.query<Row>(
          `SELECT min(e.sequence) AS sequence FROM events e WHERE e.sequence > $1
           AND NOT EXISTS (SELECT 1 FROM webhook_fanned_out f WHERE f.event_sequence = e.sequence)`,
          [current],
        )
      ).rows[0]!.sequence;
      let next = Number(settled);
      if (waiting !== null && waiting !== undefined) next = Math.min(next, Number(waiting) - 1);
      if (next <= current) return current;
      await client.query("UPDATE webhook_dispatch SET watermark = $1 WHERE name = 'events'", [next]);
      await client.query('DELETE FROM webhook_fanned_out WHERE event_sequence <= $1', [next]);
      return next;
    });
  }

  async claimDelivery(input: ClaimDeliveryInput): Promise<ClaimedDelivery | undefined> {
    const candidates = await this.query(
      `SELECT d.id, d.endpoint_id FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.state = 'active'
       WHERE d.state IN ('pending', 'delivering') AND d.next_attempt_at <= $1
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)
         AND ${NO_EARLIER_OPEN}
         AND (SELECT count(*) FROM webhook_deliveries c WHERE c.endpoint_id = d.endpoint_id
              AND c.state = 'delivering' AND c.lease_expires_at > $1) < $2
       ORDER BY d.next_attempt_at, d.event_sequence LIMIT $3`,
      [input.now, input.maxPerEndpoint, CLAIM_CANDIDATES],
    );
    for (const candidate of candidates.rows) {
      const claimed = await this.transaction((client) =>
        this.claimOne(client, String(candidate.id), String(candidate.endpoint_id), input),
      );
      if (claimed) return claimed;
    }
    return undefined;
  }

  private async claimOne(
    client: Client,
    deliveryId: string,
    endpointId: string,
    input: ClaimDeliveryInput,
  ): Promise<ClaimedDelivery | undefined> {
    const locked = (
      await client.query<Row>(
        "SELECT * FROM webhook_endpoints WHERE id = $1 AND state = 'active' FOR UPDATE",
        [endpointId],
      )
    ).rows[0];
    if (!locked) return undefined;
    const live = (
      await client.query<Row>(
        `SELECT count(*) AS live FROM webhook_deliveries
         WHERE endpoint_id = $1 AND state = 'delivering' AND lease_expires_at > $2`,
        [endpointId, input.now],
      )
    ).rows[0]!.live;
    if (Number(live) >= input.maxPerEndpoint) return undefined;
    const claimed = (
      await client.query<Row>(
        `UPDATE webhook_deliveries d SET state = 'delivering', lease_owner = $1, lease_expires_at = $2,
           attempts = d.attempts + 1
         WHERE d.id = $3 AND d.state IN ('pending', 'delivering') AND d.next_attempt_at <= $4
           AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $4) AND ${NO_EARLIER_OPEN}
         RETURNING d.*`,
        [input.owner, input.now + input.leaseMs, deliveryId, input.now],
      )
    ).rows[0];
    if (!claimed) return undefined;
    const delivery = deliveryFromRow(claimed);
    const event = (
      await client.query<Row>('SELECT * FROM events WHERE sequence = $1', [delivery.eventSequence])
    ).rows[0];
    return { delivery, endpoint: endpointFromRow(locked), event: event ? eventFromRow(event) : undefined };
  }

  async finishAttempt(input: FinishAttemptInput): Promise<boolean> {
    const { verdict, attempt } = input;
    return this.transaction(async (client) => {
      const changed = await client.query(
        `UPDATE webhook_deliveries SET state = $1, next_attempt_at = $2, completed_at = $3, lease_owner = NULL,
           lease_expires_at = NULL, last_status = $4, last_error = $5, last_latency_ms = $6
         WHERE id = $7 AND lease_owner = $8 AND state = 'delivering'`,
        [
          verdict.state,
          verdict.state === 'pending' ? verdict.nextAttemptAt : null,
          verdict.state === 'pending' ? null : input.now,
          attempt.status,
          attempt.error,
          attempt.latencyMs,
          input.deliveryId,
          input.owner,
        ],
      );
      if (changed.rowCount !== 1) return false;
      await client.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, status, error, latency_ms)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id, attempt) DO UPDATE SET
           started_at = excluded.started_at, status = excluded.status, error = excluded.error,
           latency_ms = excluded.latency_ms`,
        [
          attempt.deliveryId,
          attempt.attempt,
          attempt.startedAt,
          attempt.status,
          attempt.error,
          attempt.latencyMs,
        ],
      );
      await client.query('DELETE FROM webhook_delivery_attempts WHERE delivery_id = $1 AND attempt <= $2', [
        attempt.deliveryId,
        attempt.attempt - input.historyLimit,
      ]);
      return true;
    });
  }

  async countOpenDeliveries(): Promise<number> {
    const result = await this.query(
      "SELECT count(*) AS open FROM webhook_deliveries WHERE state IN ('pending', 'delivering')",
      [],
    );
    return Number(result.rows[0]!.open);
  }

  async pruneDeliveries(limit: number): Promise<number> {
    const result = await this.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT d.id FROM webhook_deliveries d
         WHERE d.state IN ('succeeded', 'failed')
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.sequence = d.event_sequence)
         LIMIT $1)`,
      [limit],
    );
    return result.rowCount ?? 0;
  }

  async listDeliveries(
    projectId: string,
    endpointId: string,
    query: DeliveryPageQuery,
  ): Promise<WebhookDeliveryRecord[]> {
    const params: unknown[] = [projectId, endpointId];
    const where = ['project_id = $1', 'endpoint_id = $2'];
    if (query.state !== undefined) {
      params.push(query.state);
      where.push(`state = $${params.length}`);
    }
    if (query.beforeId !== undefined) {
      params.push(query.beforeId);
      where.push(
        `(created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = $${params.length} AND endpoint_id = $2)`,
      );
    }
    params.push(query.limit);
    const result = await this.query(
      `SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return result.rows.map(deliveryFromRow);
  }

  async getDelivery(
    projectId: string,
    endpointId: string,
    id: string,
  ): Promise<WebhookDeliveryRecord | undefined> {
    const row = (
      await this.query(
        'SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2 AND project_id = $3',
        [id, endpointId, projectId],
      )
    ).rows[0];
    return row ? deliveryFromRow(row) : undefined;
  }

  async listAttempts(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    const result = await this.query(
      'SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt DESC',
      [deliveryId],
    );
    return result.rows.map(attemptFromRow);
  }

  async redeliver(
    input: RedeliverInput,
    idempotency: Idempotency | null,
    render: Render<WebhookDeliveryRecord>,
  ): Promise<IdempotentResult> {
    return this.run(idempotency, render, async (client) => {
      if (!(await endpointRow(client, input.projectId, input.endpointId))) throw endpointNotFound();
      const row = (
        await client.query<Row>(
          'SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2 FOR UPDATE',
          [input.deliveryId, input.endpointId],
        )
      ).rows[0];
      if (!row) throw deliveryNotFound();
      const delivery = deliveryFromRow(row);
      if (delivery.state === 'delivering' && (delivery.leaseExpiresAt ?? 0) > input.now)
        return { record: delivery, status: 200 };
      const updated = (
        await client.query<Row>(
          `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $1, give_up_at = $2, completed_at = NULL,
             lease_owner = NULL, lease_expires_at = NULL WHERE id = $3 RETURNING *`,
          [input.now, input.giveUpAt, input.deliveryId],
        )
      ).rows[0]!;
      return { record: deliveryFromRow(updated), status: 201 };
    });
  }
}
