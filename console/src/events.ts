/**
 * The Events page (#/events): the Project's events (GET /svc/v1/events) with type and resource
 * filters, and each webhook endpoint's deliveries (status, attempts, latency, next retry, last
 * error) with a Redeliver button. Tables sit in `.scroll` wrappers, so a phone-width screen
 * scrolls the table, never the page. The endpoints part needs a key with webhooks:admin; with
 * governance:read alone it says so and the events list still works.
 */
import { ApiError, explain, get, type Json, storedKey } from './api.js';
import { h, notice } from './dom.js';
import { shortTime } from './format.js';

/** The console's one write: a redelivery (Idempotency-Key fresh per click). */
async function redeliver(endpointId: string, deliveryId: string): Promise<Json> {
  const response = await fetch(
    `/svc/v1/webhook-endpoints/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${storedKey() ?? ''}`,
        'content-type': 'application/json',
        'idempotency-key': `console-${crypto.randomUUID()}`,
      },
      body: '{}',
    },
  );
  const body = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok)
    throw new ApiError(
      response.status,
      body.error?.code ?? 'unknown',
      body.error?.message ?? response.statusText,
    );
  return body;
}

function eventRows(events: Json[]): HTMLElement {
  const table = h(
    'table',
    { 'data-testid': 'event-table' },
    h('tr', {}, ...['time', 'type', 'resource', 'event id'].map((label) => h('th', {}, label))),
  );
  for (const event of events) {
    table.append(
      h(
        'tr',
        { 'data-event': event.id },
        h('td', {}, shortTime(event.created_at)),
        h('td', {}, event.type),
        h('td', {}, `${event.resource?.type ?? ''} ${event.resource?.id ?? ''}`),
        h('td', { class: 'muted' }, event.id),
      ),
    );
  }
  return h('div', { class: 'scroll' }, table);
}

async function eventsCard(filters: URLSearchParams, onFilter: (filters: URLSearchParams) => void) {
  const type = h('input', {
    name: 'type',
    placeholder: 'type, e.g. run.budget_threshold',
    'aria-label': 'Event type',
  });
  type.value = filters.get('type') ?? '';
  const resource = h('input', {
    name: 'resource_id',
    placeholder: 'resource id',
    'aria-label': 'Resource id',
  });
  resource.value = filters.get('resource_id') ?? '';
  const form = h(
    'form',
    { class: 'toolbar', 'data-testid': 'event-filters' },
    type,
    resource,
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (type.value.trim()) next.set('type', type.value.trim());
    if (resource.value.trim()) next.set('resource_id', resource.value.trim());
    onFilter(next);
  });
  const card = h('section', { class: 'card' }, h('h2', {}, 'Events'), form);
  const query = new URLSearchParams(filters);
  query.set('limit', '50');
  try {
    const page = await get(`/svc/v1/events?${query}`);
    const events = (page.data as Json[]).slice().reverse();
    card.append(
      events.length === 0
        ? notice(
            'empty',
            'No events match.',
            'Events appear when budgets cross thresholds, keys are revoked, and so on.',
          )
        : eventRows(events),
    );
  } catch (failure) {
    const explained = explain(failure);
    card.append(notice('error', explained.title, explained.advice));
  }
  return card;
}

function deliveryRows(endpoint: Json, deliveries: Json[], refresh: () => void): HTMLElement {
  const table = h(
    'table',
    { 'data-testid': 'delivery-table' },
    h(
      'tr',
      {},
      ...['created', 'event', 'status', 'attempts', 'latency', 'next retry', 'last error', ''].map((label) =>
        h('th', {}, label),
      ),
    ),
  );
  for (const delivery of deliveries) {
    const button = h(
      'button',
      {
        'data-testid': 'redeliver',
        onclick: async () => {
          button.setAttribute('disabled', '');
          try {
            await redeliver(endpoint.id, delivery.id);
            refresh();
          } catch (failure) {
            button.removeAttribute('disabled');
            button.title = explain(failure).advice;
          }
        },
      },
      'Redeliver',
    );
    table.append(
      h(
        'tr',
        { 'data-delivery': delivery.id, 'data-status': delivery.status },
        h('td', {}, shortTime(delivery.created_at)),
        h('td', {}, `${delivery.event_type} ${delivery.event_id}`),
        h('td', {}, delivery.status),
        h('td', { class: 'num' }, String(delivery.attempts)),
        h('td', { class: 'num' }, delivery.last_latency_ms === null ? '—' : `${delivery.last_latency_ms} ms`),
        h('td', {}, shortTime(delivery.next_attempt_at)),
        h('td', {}, delivery.last_error ?? ''),
        h('td', {}, button),
      ),
    );
  }
  return h('div', { class: 'scroll' }, table);
}

async function endpointsCard(refresh: () => void) {
  const card = h(
    'section',
    { class: 'card', 'data-testid': 'webhook-endpoints' },
    h('h2', {}, 'Webhook endpoints'),
  );
  let endpoints: Json[];
  try {
    endpoints = (await get('/svc/v1/webhook-endpoints')).data as Json[];
  } catch (failure) {
    if (failure instanceof ApiError && failure.code === 'gateway_key_scope_denied') {
      card.append(
        notice(
          'empty',
          'This key cannot see webhook endpoints.',
          'Sign in with a key that has the webhooks:admin scope.',
        ),
      );
      return card;
    }
    throw failure;
  }
  if (endpoints.length === 0)
    card.append(
      notice(
        'empty',
        'No webhook endpoints.',
        'Create one with POST /svc/v1/webhook-endpoints (docs/events.md).',
      ),
    );
  for (const endpoint of endpoints) {
    const deliveries = (
      await get(`/svc/v1/webhook-endpoints/${encodeURIComponent(endpoint.id)}/deliveries?limit=20`)
    ).data as Json[];
    card.append(
      h(
        'div',
        { 'data-endpoint': endpoint.id },
        h('h3', {}, endpoint.description ?? endpoint.id),
        h(
          'p',
          { class: 'muted', style: 'overflow-wrap: anywhere' },
          `${endpoint.url} · ${endpoint.status} · ${endpoint.event_types ? endpoint.event_types.join(', ') : 'every event type'}`,
        ),
        deliveries.length === 0
          ? notice('empty', 'No deliveries yet.')
          : deliveryRows(endpoint, deliveries, refresh),
      ),
    );
  }
  return card;
}

export async function eventsPage(root: HTMLElement, filters: URLSearchParams, refresh: () => void) {
  const onFilter = (next: URLSearchParams) => {
    const text = next.toString();
    location.hash = text ? `#/events?${text}` : '#/events';
  };
  const [events, endpoints] = await Promise.all([eventsCard(filters, onFilter), endpointsCard(refresh)]);
  root.replaceChildren(h('h1', {}, 'Events and webhooks'), events, endpoints);
}
