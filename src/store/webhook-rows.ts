/**
 * Row mappers of the webhook tables for both adapters (migration 13): SQLite returns JSON as text
 * and times as text, PostgreSQL returns JSONB parsed, TIMESTAMPTZ as Date and BIGINT as strings.
 */
import type { Row } from './rows.js';
import type {
  DeliveryAttemptRecord,
  DeliveryState,
  NewWebhookDelivery,
  NewWebhookEndpoint,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhookEndpointSource,
  WebhookEndpointState,
} from './webhooks-port.js';

const numberOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
const textOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

export function endpointFromRow(row: Row): WebhookEndpointRecord {
  const types = row.event_types;
  const createdAt = row.created_at;
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    url: String(row.url),
    description: textOrNull(row.description),
    eventTypes:
      types === null || types === undefined
        ? null
        : ((typeof types === 'string' ? JSON.parse(types) : types) as string[]),
    source: String(row.source) as WebhookEndpointSource,
    secret: String(row.secret),
    previousSecret: textOrNull(row.previous_secret),
    previousSecretExpiresAt: numberOrNull(row.previous_secret_expires_at),
    state: String(row.state) as WebhookEndpointState,
    createdAt: createdAt instanceof Date ? createdAt.toISOString() : String(createdAt),
  };
}

export const ENDPOINT_COLUMNS =
  'id, project_id, url, description, event_types, source, secret, state, created_at';

export function endpointValues(endpoint: NewWebhookEndpoint): unknown[] {
  return [
    endpoint.id,
    endpoint.projectId,
    endpoint.url,
    endpoint.description,
    endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
    endpoint.source,
    endpoint.secret,
    endpoint.state,
    endpoint.createdAt,
  ];
}

export function deliveryFromRow(row: Row): WebhookDeliveryRecord {
  return {
    id: String(row.id),
    endpointId: String(row.endpoint_id),
    projectId: String(row.project_id),
    eventSequence: Number(row.event_sequence),
    eventId: String(row.event_id),
    eventType: String(row.event_type),
    resourceKey: String(row.resource_key),
    state: String(row.state) as DeliveryState,
    attempts: Number(row.attempts),
    nextAttemptAt: numberOrNull(row.next_attempt_at),
    giveUpAt: Number(row.give_up_at),
    createdAt: Number(row.created_at),
    completedAt: numberOrNull(row.completed_at),
    leaseOwner: textOrNull(row.lease_owner),
    leaseExpiresAt: numberOrNull(row.lease_expires_at),
    lastStatus: numberOrNull(row.last_status),
    lastError: textOrNull(row.last_error),
    lastLatencyMs: numberOrNull(row.last_latency_ms),
  };
}

export const DELIVERY_COLUMNS =
  'id, endpoint_id, project_id, event_sequence, event_id, event_type, resource_key, state, attempts, next_attempt_at, give_up_at, created_at';

/** A new delivery's values in DELIVERY_COLUMNS order: pending, due at once. */
export function deliveryValues(delivery: NewWebhookDelivery): unknown[] {
  return [
    delivery.id,
    delivery.endpointId,
    delivery.projectId,
    delivery.eventSequence,
    delivery.eventId,
    delivery.eventType,
    delivery.resourceKey,
    'pending',
    0,
    delivery.createdAt,
    delivery.giveUpAt,
    delivery.createdAt,
  ];
}

export function attemptFromRow(row: Row): DeliveryAttemptRecord {
  return {
    deliveryId: String(row.delivery_id),
    attempt: Number(row.attempt),
    startedAt: Number(row.started_at),
    status: numberOrNull(row.status),
    error: textOrNull(row.error),
    latencyMs: Number(row.latency_ms),
  };
}

/**
 * The condition "no earlier delivery of the same resource to the same endpoint is still open",
 * about the delivery aliased `d` (both adapters).
 */
export const NO_EARLIER_OPEN = `NOT EXISTS (
  SELECT 1 FROM webhook_deliveries p
  WHERE p.endpoint_id = d.endpoint_id AND p.resource_key = d.resource_key
    AND p.event_sequence < d.event_sequence AND (p.state = 'pending' OR p.state = 'delivering'))`;
