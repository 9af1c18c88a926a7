/**
 * /svc/v1/events (scope governance:read or webhooks:admin): the Project's events (docs/events.md).
 * Thin: guard, hand the query string to the use case (events/events-api.ts), render JSON.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { EventsApi } from '../events/events-api.js';
import type { Query } from '../reports/params.js';
import type { Store } from '../store/port.js';
import type { Guard } from './governance-routes.js';

/** Either scope reads the events: governance readers and whoever administers webhook endpoints. */
export const EVENTS_READ_SCOPES = ['governance:read', 'webhooks:admin'] as const;

export interface EventRouteDeps {
  guard: Guard;
  store: Store;
}

export function registerEventRoutes(app: FastifyInstance, deps: EventRouteDeps): void {
  const events = new EventsApi(deps.store);
  const query = (request: FastifyRequest) => request.query as Query;

  app.get('/svc/v1/events', async (request) => {
    const caller = await deps.guard(request, EVENTS_READ_SCOPES);
    return events.list(caller, query(request));
  });

  app.get<{ Params: { id: string } }>('/svc/v1/events/:id', async (request) => {
    const caller = await deps.guard(request, EVENTS_READ_SCOPES);
    return events.get(caller, request.params.id, query(request));
  });
}
