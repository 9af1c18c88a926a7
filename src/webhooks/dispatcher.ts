/**
 * The webhook dispatcher: runs on every replica while it listens, never on a model call's path.
 *
 * Each tick:
 *   1. fan-out: events after the watermark not yet fanned out -> one delivery per subscribed
 *      active endpoint of the event's Project (store: one transaction per page, idempotent across
 *      replicas); every WATERMARK_EVERY_MS the watermark moves past events fanned out more than
 *      WATERMARK_GRACE_MS ago.
 *   2. delivery: while fewer than webhooks.max_concurrent_deliveries run here, claim a due delivery
 *      with a lease (store: in order per resource and endpoint, at most
 *      webhooks.max_concurrent_per_endpoint leases per endpoint across replicas) and POST it.
 *   3. the verdict, written only while the lease is ours: 2xx -> succeeded; anything else, a timeout
 *      or a network error -> pending again after retryDelayMs (full jitter), or failed once the
 *      delivery's retry window has passed.
 * A replica that dies mid-delivery leaves a lease that passes after `leaseMs` (timeout + margin);
 * another replica then delivers again: at least once, receivers dedupe on the event id.
 */
import type { Logger } from 'pino';
import { eventEnvelope } from '../events/envelope.js';
import type { Clock } from '../lib/clock.js';
import { newId, randomBase32 } from '../lib/ids.js';
import { packageVersion } from '../lib/package-version.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { EventRecord, Store } from '../store/port.js';
import type {
  AttemptVerdict,
  ClaimedDelivery,
  NewWebhookDelivery,
  WebhookEndpointRecord,
} from '../store/webhooks-port.js';
import { type BackoffSettings, retryDelayMs } from './backoff.js';
import type { DeliveryClient, DeliveryResult } from './delivery-client.js';
import type { SecretBox } from './secret-box.js';
import { signatureHeader } from './signature.js';

/** Events read per fan-out page. */
const FAN_OUT_PAGE = 200;
/** How often the watermark is moved, and past markers older than this grace (a late commit's bound). */
const WATERMARK_EVERY_MS = 10_000;
export const WATERMARK_GRACE_MS = 60_000;
/** How often the outbox depth gauge is read from the store. */
const DEPTH_EVERY_MS = 5_000;

export interface DispatcherSettings {
  pollIntervalMs: number;
  timeoutMs: number;
  retryWindowMs: number;
  backoff: BackoffSettings;
  maxPerEndpoint: number;
  maxConcurrent: number;
  attemptHistory: number;
}

export interface DispatcherDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  client: DeliveryClient;
  metrics?: GatewayMetrics | undefined;
  settings: DispatcherSettings;
}

export function subscribes(endpoint: WebhookEndpointRecord, event: EventRecord): boolean {
  return (
    endpoint.projectId === event.projectId &&
    (endpoint.eventTypes === null || endpoint.eventTypes.includes(event.type))
  );
}

export class WebhookDispatcher {
  readonly owner = `webhooks_${randomBase32(16)}`;
  private readonly userAgent = `svc-gateway-webhooks/${packageVersion()}`;
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private ticking = false;
  private again = false;
  private lastWatermarkAt = 0;
  private lastDepthAt = 0;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Lease of a claimed delivery: the request's bound plus a margin for the verdict's write. */
  get leaseMs(): number {
    return this.deps.settings.timeoutMs + Math.max(5_000, this.deps.settings.timeoutMs);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops claiming and waits for the deliveries in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
    await this.deps.client.close();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.tick().finally(() => this.schedule(this.deps.settings.pollIntervalMs));
    }, delayMs);
    this.timer.unref();
  }

  /** One round: fan out, then claim and start deliveries up to the bounds. */
  async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        await this.fanOut();
        await this.claimAndDeliver();
        await this.housekeeping();
      } while (this.again && !this.stopped);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'webhook dispatch round failed; retrying at the next tick');
    } finally {
      this.ticking = false;
    }
  }

  private async fanOut(): Promise<void> {
    const { store, clock, settings } = this.deps;
    for (;;) {
      const events = await store.webhooks.eventsToFanOut(FAN_OUT_PAGE);
      if (events.length === 0) return;
      const endpoints = await store.webhooks.listActiveEndpoints();
      const now = clock.now();
      const deliveries: NewWebhookDelivery[] = [];
      for (const event of events) {
        for (const endpoint of endpoints) {
          if (!subscribes(endpoint, event)) continue;
          deliveries.push({
            id: newId('whd'),
            endpointId: endpoint.id,
            projectId: event.projectId,
            eventSequence: event.sequence,
            eventId: event.id,
            eventType: event.type,
            resourceKey: `${event.resourceType}:${event.resourceId}`,
            createdAt: now,
            giveUpAt: now + settings.retryWindowMs,
          });
        }
      }
      await store.webhooks.recordFanOut(
        events.map((event) => event.sequence),
        deliveries,
        now,
      );
      if (events.length < FAN_OUT_PAGE || this.stopped) return;
    }
  }

  private async claimAndDeliver(): Promise<void> {
    const { store, clock, settings } = this.deps;
    while (!this.stopped && this.running.size < settings.maxConcurrent) {
      const claimed = await store.webhooks.claimDelivery({
        owner: this.owner,
        now: clock.now(),
        leaseMs: this.leaseMs,
        maxPerEndpoint: settings.maxPerEndpoint,
      });
      if (!claimed) return;
      const delivery = this.deliver(claimed)
        .catch((error: unknown) =>
          this.deps.logger.warn(
            { err: error, delivery: claimed.delivery.id },
            'webhook delivery failed to record',
          ),
        )
        .finally(() => {
          this.running.delete(delivery);
          // A finished delivery may unblock the next event of its resource: look again now.
          if (!this.stopped) this.schedule(0);
        });
      this.running.add(delivery);
    }
  }

  private async housekeeping(): Promise<void> {
    const now = this.deps.clock.now();
    if (now - this.lastWatermarkAt >= WATERMARK_EVERY_MS) {
      this.lastWatermarkAt = now;
      await this.deps.store.webhooks.advanceWatermark(now - WATERMARK_GRACE_MS);
    }
    if (this.deps.metrics && now - this.lastDepthAt >= DEPTH_EVERY_MS) {
      this.lastDepthAt = now;
      this.deps.metrics
        .gauge('svc_webhook_outbox_depth')
        .set(await this.deps.store.webhooks.countOpenDeliveries());
    }
  }

  /** The secrets that sign now: the current one, then the previous one during its overlap. */
  private signingSecrets(endpoint: WebhookEndpointRecord, now: number): string[] {
    const { secrets } = this.deps;
    const current = secrets.open(endpoint.secret, endpoint.projectId, endpoint.id);
    if (endpoint.previousSecret === null || (endpoint.previousSecretExpiresAt ?? 0) <= now) return [current];
    return [current, secrets.open(endpoint.previousSecret, endpoint.projectId, endpoint.id)];
  }

  private async deliver(claimed: ClaimedDelivery): Promise<void> {
    const { clock } = this.deps;
    const { delivery, endpoint, event } = claimed;
    const startedAt = clock.now();
    let result: DeliveryResult;
    if (!event) {
      result = { kind: 'network_error', error: 'the event is no longer stored (retention)', latencyMs: 0 };
    } else {
      try {
        const body = JSON.stringify(eventEnvelope(event));
        const headers = {
          'content-type': 'application/json',
          'user-agent': this.userAgent,
          'svc-event-id': event.id,
          'svc-event-type': event.type,
          'svc-delivery-id': delivery.id,
          'svc-delivery-attempt': String(delivery.attempts),
          'svc-signature': signatureHeader(
            this.signingSecrets(endpoint, startedAt),
            Math.floor(startedAt / 1000),
            body,
          ),
        };
        result = await this.deps.client.post(endpoint.url, headers, body);
      } catch (error) {
        // The secret did not open (sealing key missing or changed): retried, the operator can fix it.
        result = { kind: 'network_error', error: `cannot sign: ${(error as Error).message}`, latencyMs: 0 };
      }
    }
    await this.record(claimed, result, startedAt, event === undefined);
  }

  private async record(
    claimed: ClaimedDelivery,
    result: DeliveryResult,
    startedAt: number,
    eventGone: boolean,
  ): Promise<void> {
    const { store, clock, settings, metrics } = this.deps;
    const { delivery } = claimed;
    const now = clock.now();
    const ok = result.kind === 'answered' && result.status >= 200 && result.status < 300;
    let verdict: AttemptVerdict;
    if (ok) verdict = { state: 'succeeded' };
    else if (eventGone || now >= delivery.giveUpAt) verdict = { state: 'failed' };
    else
      verdict = { state: 'pending', nextAttemptAt: now + retryDelayMs(delivery.attempts, settings.backoff) };
    const status = result.kind === 'answered' ? result.status : null;
    const error = result.kind === 'answered' ? (ok ? null : `answered HTTP ${result.status}`) : result.error;
    const held = await store.webhooks.finishAttempt({
      deliveryId: delivery.id,
      owner: this.owner,
      verdict,
      now,
      historyLimit: settings.attemptHistory,
      attempt: {
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        startedAt,
        status,
        error,
        latencyMs: result.latencyMs,
      },
    });
    if (!metrics) return;
    const label = result.kind === 'answered' ? (ok ? 'success' : 'http_error') : result.kind;
    metrics.counterCell('svc_webhook_delivery_attempts_total', { result: label }).inc();
    metrics
      .histogramCell('svc_webhook_delivery_duration_seconds', { result: label })
      .observe(result.latencyMs / 1000);
    if (held && verdict.state !== 'pending')
      metrics.counterCell('svc_webhook_deliveries_total', { result: verdict.state }).inc();
  }
}
