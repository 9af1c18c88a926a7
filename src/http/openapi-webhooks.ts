/** The webhook endpoints section of the OpenAPI document (merged into openapi.ts). */
import {
  CreateEndpointBody,
  DeletedEndpointSchema,
  DeliveryListSchema,
  DeliverySchema,
  EndpointListSchema,
  EndpointRecordSchema,
  EndpointWithSecretSchema,
  RedeliverBody,
  RotateSecretBody,
} from '../webhooks/schemas.js';
import { errors, idParameter, ref, schema } from './openapi-parts.js';

const SCOPE = 'webhooks:admin';
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description: '1-255 visible ASCII characters; scoped to (Project, Gateway Key); retained 24 h.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};
const deliveryParameter = { name: 'delivery_id', in: 'path', required: true, schema: { type: 'string' } };
const query = (name: string, description: string, values: unknown) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: values,
});
const json = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } });

function post(summary: string, description: string, body: string, response: string, parameters: unknown[]) {
  return {
    summary,
    description: `Scope: ${SCOPE}. ${description}`,
    parameters: [...parameters, idempotencyKey],
    requestBody: { required: true, ...json(body) },
    responses: {
      '201': { description: 'Done', ...json(response) },
      '200': { description: 'Replayed (or nothing to change)', ...json(response) },
      ...errors(400, 401, 403, 404, 409, 429, 503),
    },
  };
}

function get(summary: string, response: string, parameters: unknown[]) {
  return {
    summary,
    description: `Scope: ${SCOPE}. Another Project's ids answer 404 like unknown ones.`,
    parameters,
    responses: { '200': { description: 'OK', ...json(response) }, ...errors(400, 401, 403, 404, 429, 503) },
  };
}

export const WEBHOOK_PATHS = {
  '/svc/v1/webhook-endpoints': {
    post: post(
      "Create a webhook endpoint of the caller's Project",
      'First success 201 with the signing secret (shown once); a replay with the same key and body answers 200 with secret null. The URL is refused with 400 invalid_webhook_url (http/https only, no credentials, no fragment, at most 2048 characters, must resolve, no internal address unless webhooks.allow_private_networks).',
      'CreateWebhookEndpointBody',
      'WebhookEndpointWithSecret',
      [],
    ),
    get: get(
      "List the caller's Project's webhook endpoints (never their secrets)",
      'WebhookEndpointList',
      [],
    ),
  },
  '/svc/v1/webhook-endpoints/{id}': {
    get: get('Read a webhook endpoint', 'WebhookEndpoint', [idParameter]),
    delete: {
      summary: 'Delete a webhook endpoint with its deliveries',
      description: `Scope: ${SCOPE}. No body, no Idempotency-Key; a second DELETE answers 404.`,
      parameters: [idParameter],
      responses: {
        '200': { description: 'Deleted', ...json('DeletedWebhookEndpoint') },
        ...errors(401, 403, 404, 429, 503),
      },
    },
  },
  '/svc/v1/webhook-endpoints/{id}/rotate-secret': {
    post: post(
      'Rotate the signing secret',
      'A new secret (shown once); the previous one keeps signing alongside (a second v1= in Svc-Signature) for overlap_seconds (default webhooks.rotation_overlap_seconds, 24 h).',
      'RotateWebhookSecretBody',
      'WebhookEndpointWithSecret',
      [idParameter],
    ),
  },
  '/svc/v1/webhook-endpoints/{id}/deliveries': {
    get: get('List the deliveries of an endpoint, newest first', 'WebhookDeliveryList', [
      idParameter,
      query('limit', 'Page size, 1-100 (default 20).', { type: 'integer', minimum: 1, maximum: 100 }),
      query('after', 'The next_cursor of the previous page (a delivery id).', { type: 'string' }),
      query('status', 'Only deliveries in this state.', {
        type: 'string',
        enum: ['pending', 'delivering', 'succeeded', 'failed'],
      }),
    ]),
  },
  '/svc/v1/webhook-endpoints/{id}/deliveries/{delivery_id}': {
    get: get('Read a delivery with its recent attempts', 'WebhookDelivery', [idParameter, deliveryParameter]),
  },
  '/svc/v1/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver': {
    post: post(
      'Deliver again now',
      '201: the delivery is due now with a fresh retry window, whatever its state (failed and succeeded included); 200: an attempt is in flight, nothing changed.',
      'RedeliverBody',
      'WebhookDelivery',
      [idParameter, deliveryParameter],
    ),
  },
};

export const WEBHOOK_SCHEMAS = {
  CreateWebhookEndpointBody: schema(CreateEndpointBody),
  RotateWebhookSecretBody: schema(RotateSecretBody),
  RedeliverBody: schema(RedeliverBody),
  WebhookEndpoint: schema(EndpointRecordSchema),
  WebhookEndpointWithSecret: schema(EndpointWithSecretSchema),
  WebhookEndpointList: schema(EndpointListSchema),
  DeletedWebhookEndpoint: schema(DeletedEndpointSchema),
  WebhookDelivery: schema(DeliverySchema),
  WebhookDeliveryList: schema(DeliveryListSchema),
};
