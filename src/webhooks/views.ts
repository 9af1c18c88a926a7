/** Webhook records -> /svc/v1 JSON. Never a secret: create and rotate add it once, themselves. */
import type {
  DeliveryAttemptRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from '../store/webhooks-port.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function endpointBody(endpoint: WebhookEndpointRecord, nowMs: number) {
  const overlapping = endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > nowMs;
  return {
    id: endpoint.id,
    object: 'webhook_endpoint' as const,
    project_id: endpoint.projectId,
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    source: endpoint.source,
    status: endpoint.state,
    created_at: endpoint.createdAt,
    previous_secret_expires_at: overlapping ? iso(endpoint.previousSecretExpiresAt) : null,
  };
}

export function attemptBody(attempt: DeliveryAttemptRecord) {
  return {
    attempt: attempt.attempt,
    started_at: new Date(attempt.startedAt).toISOString(),
    status_code: attempt.status,
    error: attempt.error,
    latency_ms: attempt.latencyMs,
  };
}

export function deliveryBody(delivery: WebhookDeliveryRecord, attempts: readonly DeliveryAttemptRecord[]) {
  return {
    id: delivery.id,
    object: 'webhook_delivery' as const,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.state,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatus,
    last_error: delivery.lastError,
    last_latency_ms: delivery.lastLatencyMs,
    next_attempt_at:
      delivery.state === 'pending' || delivery.state === 'delivering' ? iso(delivery.nextAttemptAt) : null,
    give_up_at: new Date(delivery.giveUpAt).toISOString(),
    created_at: new Date(delivery.createdAt).toISOString(),
    completed_at: iso(delivery.completedAt),
    recent_attempts: attempts.map(attemptBody),
  };
}
