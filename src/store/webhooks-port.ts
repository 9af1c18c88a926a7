/**
 * The webhooks sub-port of the store (Store.webhooks): endpoints, the fan-out of events into
 * deliveries, and the leased delivery queue (migration 13; docs/events.md, Webhooks).
 *
 * Fan-out: events are read in `sequence` order after the dispatcher's watermark, skipping those
 * already fanned out (a marker row per event). One transaction writes an event's deliveries (one
 * per subscribed endpoint, unique per endpoint and event) and its marker, so replicas fanning out
 * at once write each delivery once. The watermark moves past markers older than a grace period
 * (an event whose transaction commits late, after a later sequence was seen, is still found).
 *
 * Delivery: a delivery is claimed with a lease (state `delivering`, lease owner and expiry) by one
 * replica at a time; a lease that passes (the replica died) makes it claimable again. A claim is
 * refused while an earlier delivery of the same resource to the same endpoint is still open
 * (ordering), or while `maxPerEndpoint` leases of that endpoint are live (PostgreSQL: counted under
 * a lock on the endpoint's row, so the bound holds across replicas). Times are epoch milliseconds.
 */
import type { EventRecord, Idempotency, IdempotentResult, Render } from './records.js';

export type WebhookEndpointState = 'active' | 'disabled';
export type WebhookEndpointSource = 'api' | 'config';

export interface WebhookEndpointRecord {
  /** `whe_` + 26 base32 characters (configured endpoints: the id of the configuration). */
  id: string;
  projectId: string;
  url: string;
  description: string | null;
  /** Event types delivered to this endpoint; null = every type. */
  eventTypes: string[] | null;
  source: WebhookEndpointSource;
  /** The signing secret as stored (webhooks/secret-box.ts: sealed when a sealing key exists). */
  secret: string;
  /** The secret before the last rotation, still signing until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  state: WebhookEndpointState;
  /** RFC 3339. */
  createdAt: string;
}

export type NewWebhookEndpoint = Omit<WebhookEndpointRecord, 'previousSecret' | 'previousSecretExpiresAt'>;

export type DeliveryState = 'pending' | 'delivering' | 'succeeded' | 'failed';

export interface WebhookDeliveryRecord {
  /** `whd_` + 26 base32 characters. */
  id: string;
  endpointId: string;
  projectId: string;
  eventSequence: number;
  eventId: string;
  eventType: string;
  /** `<resource type>:<resource id>`: deliveries of one resource to one endpoint go in order. */
  resourceKey: string;
  state: DeliveryState;
  /** Attempts started (claims). */
  attempts: number;
  /** When the next attempt may start (pending); null once terminal. */
  nextAttemptAt: number | null;
  /** After this instant a failing delivery is marked failed instead of retried. */
  giveUpAt: number;
  createdAt: number;
  completedAt: number | null;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
}

export type NewWebhookDelivery = Pick<
  WebhookDeliveryRecord,
  'id' | 'endpointId' | 'projectId' | 'eventSequence' | 'eventId' | 'eventType' | 'resourceKey' | 'giveUpAt'
> & { createdAt: number };

/** One attempt of a delivery, kept in a bounded history (the newest `historyLimit`). */
export interface DeliveryAttemptRecord {
  deliveryId: string;
  /** 1 for the first attempt. */
  attempt: number;
  startedAt: number;
  /** The receiver's HTTP status; null when none came (timeout, network error, refused address). */
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface ClaimDeliveryInput {
  owner: string;
  now: number;
  leaseMs: number;
  maxPerEndpoint: number;
}

/** A claimed delivery with what sending it needs; event undefined when retention removed it. */
export interface ClaimedDelivery {
  delivery: WebhookDeliveryRecord;
  endpoint: WebhookEndpointRecord;
  event: EventRecord | undefined;
}

/** Where a finished attempt leaves its delivery. */
export type AttemptVerdict =
  | { state: 'succeeded' }
  | { state: 'pending'; nextAttemptAt: number }
  | { state: 'failed' };

export interface FinishAttemptInput {
  deliveryId: string;
  owner: string;
  verdict: AttemptVerdict;
  attempt: DeliveryAttemptRecord;
  now: number;
  historyLimit: number;
}

export interface DeliveryPageQuery {
  /** Deliveries created before this one (the page cursor: newest first). */
  beforeId?: string;
  limit: number;
  state?: DeliveryState;
}

export interface RotateSecretInput {
  projectId: string;
  id: string;
  secret: string;
  previousExpiresAt: number;
}

export interface RedeliverInput {
  projectId: string;
  endpointId: string;
  deliveryId: string;
  now: number;
  giveUpAt: number;
}

export interface WebhooksRepository {
  // ---- endpoints
  /** Inserts an endpoint; with an idempotency key, a replay returns the stored body (200). */
  createEndpoint(
    endpoint: NewWebhookEndpoint,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult>;
  /**
   * Inserts or updates an endpoint declared in configuration (active again if it was disabled). A
   * changed secret keeps the old one as previous until `previousExpiresAt`.
   */
  upsertConfiguredEndpoint(endpoint: NewWebhookEndpoint, previousExpiresAt: number): Promise<void>;
  /** Disables configured endpoints whose id is not in `keep` (removed from the configuration). */
  disableConfiguredEndpointsExcept(keep: string[]): Promise<number>;
  getEndpoint(projectId: string, id: string): Promise<WebhookEndpointRecord | undefined>;
  /** The Project's endpoints (every state), oldest first. */
  listEndpoints(projectId: string): Promise<WebhookEndpointRecord[]>;
  /** Active endpoints of every Project (the fan-out's subscriptions). */
  listActiveEndpoints(): Promise<WebhookEndpointRecord[]>;
  /** Deletes the endpoint with its deliveries and their attempts. Throws webhook_endpoint_not_found. */
  deleteEndpoint(
    projectId: string,
    id: string,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult>;
  /** Replaces the secret; the current one becomes previous. Throws webhook_endpoint_not_found. */
  rotateSecret(
    input: RotateSecretInput,
    idempotency: Idempotency | null,
    render: Render<WebhookEndpointRecord>,
  ): Promise<IdempotentResult>;

  // ---- fan-out
  /** Events after the watermark not fanned out yet, ascending by sequence. */
  eventsToFanOut(limit: number): Promise<EventRecord[]>;
  /** In one transaction: the deliveries (an existing endpoint x event pair is skipped) and the markers. */
  recordFanOut(sequences: number[], deliveries: NewWebhookDelivery[], fannedAt: number): Promise<void>;
  /**
   * Moves the watermark past events fanned out before `settledBefore` (and past no event still
   * waiting to be fanned out), dropping their markers. Returns the watermark.
   */
  advanceWatermark(settledBefore: number): Promise<number>;

  // ---- delivery
  claimDelivery(input: ClaimDeliveryInput): Promise<ClaimedDelivery | undefined>;
  /** Records the attempt and the verdict while the lease is ours; false when it is not. */
  finishAttempt(input: FinishAttemptInput): Promise<boolean>;
  /** Open (pending or delivering) deliveries of every Project: the outbox depth. */
  countOpenDeliveries(): Promise<number>;
  /** Deletes terminal deliveries whose event retention removed; returns how many. */
  pruneDeliveries(limit: number): Promise<number>;

  // ---- visibility
  /** An endpoint's deliveries, newest first. */
  listDeliveries(
    projectId: string,
    endpointId: string,
    query: DeliveryPageQuery,
  ): Promise<WebhookDeliveryRecord[]>;
  getDelivery(projectId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | undefined>;
  /** The kept attempts of a delivery, newest first. */
  listAttempts(deliveryId: string): Promise<DeliveryAttemptRecord[]>;
  /**
   * Makes a delivery due now (any state but one whose lease is live: then it is left as it is), with
   * a fresh retry window. Throws webhook_endpoint_not_found | webhook_delivery_not_found.
   */
  redeliver(
    input: RedeliverInput,
    idempotency: Idempotency | null,
    render: Render<WebhookDeliveryRecord>,
  ): Promise<IdempotentResult>;
}
