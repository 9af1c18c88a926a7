/**
 * Webhook endpoints declared in configuration (projects[].webhooks), synced into the store at
 * start-up by every replica: inserted when absent; URL, event types and description follow the
 * configuration; an endpoint removed from it is disabled (its deliveries wait; nothing is sent).
 * The secret comes from the named environment variable. When it differs from the stored one, the
 * stored one becomes the previous secret and keeps signing for webhooks.rotation_overlap_seconds,
 * exactly as after POST /svc/v1/webhook-endpoints/{id}/rotate-secret.
 */
import type { Config } from '../config/schema.js';
import type { Store } from '../store/port.js';
import { EVENT_TYPES } from '../store/records.js';
import type { SecretBox } from './secret-box.js';

export async function syncConfiguredEndpoints(
  store: Store,
  config: Config,
  environment: NodeJS.ProcessEnv,
  box: SecretBox,
  nowMs: number,
): Promise<void> {
  const known = new Set<string>(EVENT_TYPES);
  const declared: string[] = [];
  for (const project of config.projects) {
    for (const endpoint of project.webhooks) {
      const unknown = (endpoint.event_types ?? []).find((type) => !known.has(type));
      if (unknown !== undefined)
        throw new Error(
          `projects.${project.id}.webhooks.${endpoint.id}.event_types: ${unknown} is not an event type (known: ${EVENT_TYPES.join(', ')})`,
        );
      const secret = environment[endpoint.secret_env];
      if (!secret) throw new Error(`webhook endpoint ${endpoint.id}: ${endpoint.secret_env} is not set`);
      const existing = await store.webhooks.getEndpoint(project.id, endpoint.id);
      const stored =
        existing && box.holds(existing.secret, secret, project.id, endpoint.id)
          ? existing.secret
          : box.seal(secret, project.id, endpoint.id);
      await store.webhooks.upsertConfiguredEndpoint(
        {
          id: endpoint.id,
          projectId: project.id,
          url: endpoint.url,
          description: endpoint.description ?? null,
          eventTypes: endpoint.event_types ? [...endpoint.event_types] : null,
          source: 'config',
          secret: stored,
          state: 'active',
          createdAt: new Date(nowMs).toISOString(),
        },
        nowMs + config.webhooks.rotation_overlap_seconds * 1000,
      );
      declared.push(endpoint.id);
    }
  }
  await store.webhooks.disableConfiguredEndpointsExcept(declared);
}
