/**
 * Webhook endpoints and their deliveries over /svc/v1/webhook-endpoints (scope webhooks:admin).
 *
 * - An endpoint belongs to the caller's Project; another Project's endpoint or delivery id answers
 *   404 like an unknown one.
 * - The URL is checked before anything is stored (url-policy.ts: 400 invalid_webhook_url naming
 *   `url`).
 * - The signing secret is made here and returned once, in the create (and rotate) answer. The
 *   idempotency record stores the answer WITHOUT it, so a replay answers `secret: null`.
 * - Rotation: the current secret becomes the previous one and keeps signing (a second `v1=`) for
 *   the overlap (body `overlap_seconds`, default webhooks.rotation_overlap_seconds).
 * - Redelivery makes a delivery due now with a fresh retry window, whatever its state (one whose
 *   lease is live is left to finish: answered 200 unchanged).
 */
import type { Config, Scope } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { idempotencyOfWrite } from '../governance/idempotency.js';
import type { Caller, WriteRequest } from '../governance/service.js';
import { validateBody } from '../governance/validate.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { IdempotentResult, Store } from '../store/port.js';
import type { DeliveryState, WebhookDeliveryRecord } from '../store/webhooks-port.js';
import { CreateEndpointBody, RedeliverBody, RotateSecretBody } from './schemas.js';
import { newWebhookSecret, type SecretBox } from './secret-box.js';
import { checkEndpointUrl } from './url-policy.js';
import { deliveryBody, endpointBody } from './views.js';

export const WEBHOOKS_SCOPE: Scope = 'webhooks:admin';

const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivering', 'succeeded', 'failed'];
const MAX_PAGE = 100;
const DEFAULT_PAGE = 20;

export interface EndpointsDeps {
  store: Store;
  clock: Clock;
  config: Config;
  secrets: SecretBox;
}

export interface DeliveryListQuery {
  limit?: unknown;
  after?: unknown;
  status?: unknown;
}

function invalidQuery(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${message}`, { param });
}

function single(value: unknown, param: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidQuery(param, 'send it once');
  return value;
}

export class EndpointsService {
  constructor(private readonly deps: EndpointsDeps) {}

  private idempotency(request: WriteRequest) {
    return idempotencyOfWrite(request, this.deps.clock.now(), this.deps.config.idempotency.retention_hours);
  }

  private renderEndpoint = (record: Parameters<typeof endpointBody>[0]) => ({
    ...endpointBody(record, this.deps.clock.now()),
    secret: null,
  });

  /** POST /svc/v1/webhook-endpoints: 201 with the secret; a replay 200 with `secret: null`. */
  async create(request: WriteRequest): Promise<IdempotentResult> {
    const fields = validateBody(CreateEndpointBody, request.body);
    const projectId = request.caller.projectId;
    const url = await checkEndpointUrl(fields.url, this.deps.config.webhooks.allow_private_networks);
    const existing = await this.deps.store.webhooks.listEndpoints(projectId);
    const limit = this.deps.config.webhooks.max_endpoints_per_project;
    if (existing.length >= limit)
      throw new GatewayError(
        'webhook_endpoint_limit',
        `The Project has ${existing.length} webhook endpoints; at most ${limit} (webhooks.max_endpoints_per_project).`,
      );
    const id = newId('whe');
    const secret = newWebhookSecret();
    const result = await this.deps.store.webhooks.createEndpoint(
      {
        id,
        projectId,
        url: url.href,
        description: fields.description ?? null,
        eventTypes: fields.event_types ? [...fields.event_types] : null,
        source: 'api',
        secret: this.deps.secrets.seal(secret, projectId, id),
        state: 'active',
        createdAt: new Date(this.deps.clock.now()).toISOString(),
      },
      this.idempotency(request),
      this.renderEndpoint,
    );
    return result.replayed ? result : { ...result, body: { ...(result.body as object), secret } };
  }

  async list(caller: Caller) {
    const nowMs = this.deps.clock.now();
    const endpoints = await this.deps.store.webhooks.listEndpoints(caller.projectId);
    return { object: 'list' as const, data: endpoints.map((endpoint) => endpointBody(endpoint, nowMs)) };
  }

  private async endpoint(caller: Caller, id: string) {
    const endpoint = await this.deps.store.webhooks.getEndpoint(caller.projectId, id);
    if (!endpoint) throw new GatewayError('webhook_endpoint_not_found', 'Webhook endpoint not found.');
    return endpoint;
  }

  async get(caller: Caller, id: string) {
    return endpointBody(await this.endpoint(caller, id), this.deps.clock.now());
  }

  /** DELETE /svc/v1/webhook-endpoints/{id}: the endpoint, its deliveries and their attempts. */
  async delete(caller: Caller, id: string) {
    await this.deps.store.webhooks.deleteEndpoint(caller.projectId, id, null, (record) => record.id);
    return { id, object: 'webhook_endpoint' as const, deleted: true as const };
  }

  /** POST .../rotate-secret: 201 with the new secret; a replay 200 with `secret: null`. */
  async rotateSecret(request: WriteRequest, id: string): Promise<IdempotentResult> {
    const fields = validateBody(RotateSecretBody, request.body);
    const projectId = request.caller.projectId;
    const secret = newWebhookSecret();
    const overlapSeconds = fields.overlap_seconds ?? this.deps.config.webhooks.rotation_overlap_seconds;
    const result = await this.deps.store.webhooks.rotateSecret(
      {
        projectId,
        id,
        secret: this.deps.secrets.seal(secret, projectId, id),
        previousExpiresAt: this.deps.clock.now() + overlapSeconds * 1000,
      },
      this.idempotency(request),
      this.renderEndpoint,
    );
    return result.replayed ? result : { ...result, body: { ...(result.body as object), secret } };
  }

  private async deliveryView(delivery: WebhookDeliveryRecord) {
    return deliveryBody(delivery, await this.deps.store.webhooks.listAttempts(delivery.id));
  }

  /** GET .../deliveries: newest first; `after` = the last id of the previous page. */
  async listDeliveries(caller: Caller, endpointId: string, query: DeliveryListQuery) {
    await this.endpoint(caller, endpointId);
    const limitText = single(query.limit, 'limit');
    const limit = limitText === undefined ? DEFAULT_PAGE : Number(limitText);
    if (limitText !== undefined && (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_PAGE))
      throw invalidQuery('limit', `must be an integer from 1 to ${MAX_PAGE}`);
    const after = single(query.after, 'after');
    const state = single(query.status, 'status');
    if (state !== undefined && !DELIVERY_STATES.includes(state as DeliveryState))
      throw invalidQuery('status', `must be one of ${DELIVERY_STATES.join(', ')}`);
    if (
      after !== undefined &&
      !(await this.deps.store.webhooks.getDelivery(caller.projectId, endpointId, after))
    )
      throw invalidQuery('after', `no delivery ${after} of this endpoint to page after`);
    const rows = await this.deps.store.webhooks.listDeliveries(caller.projectId, endpointId, {
      limit: limit + 1,
      ...(after !== undefined ? { beforeId: after } : {}),
      ...(state !== undefined ? { state: state as DeliveryState } : {}),
    });
    const page = rows.slice(0, limit);
    const data = await Promise.all(page.map((delivery) => this.deliveryView(delivery)));
    const hasMore = rows.length > limit;
    return {
      object: 'list' as const,
      data,
      has_more: hasMore,
      next_cursor: hasMore ? (page.at(-1)?.id ?? null) : null,
    };
  }

  async getDelivery(caller: Caller, endpointId: string, id: string) {
    await this.endpoint(caller, endpointId);
    const delivery = await this.deps.store.webhooks.getDelivery(caller.projectId, endpointId, id);
    if (!delivery) throw new GatewayError('webhook_delivery_not_found', 'Webhook delivery not found.');
    return this.deliveryView(delivery);
  }

  /** POST .../deliveries/{id}/redeliver: 201 when made due now, 200 when a live attempt runs. */
  async redeliver(request: WriteRequest, endpointId: string, deliveryId: string): Promise<IdempotentResult> {
    validateBody(RedeliverBody, request.body);
    const now = this.deps.clock.now();
    return this.deps.store.webhooks.redeliver(
      {
        projectId: request.caller.projectId,
        endpointId,
        deliveryId,
        now,
        giveUpAt: now + this.deps.config.webhooks.retry_window_seconds * 1000,
      },
      this.idempotency(request),
      (record) => deliveryBody(record, []),
    );
  }
}
