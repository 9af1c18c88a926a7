/**
 * A webhook endpoint declared in configuration (projects[].webhooks): synced at start-up with its
 * secret from the environment, listed as `source: config`, and its deliveries signed with that
 * secret (checked by the reference verifier); the stored form is sealed when a sealing key exists.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Api, projectsWith } from '../governance/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { appendEvents, fastWebhooks, newEvent, Receiver, verifySignature, waitFor } from './support.js';

const SECRET = `whsec_${'c'.repeat(43)}`;

let gateway: TestGateway;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  gateway = await startTestGateway({
    environment: { SVC_TEST_WEBHOOK_SECRET: SECRET, SVC_TEST_SEALING_KEY: 'ab'.repeat(32) },
    config: {
      webhooks: fastWebhooks(),
      objects: { sealing_key_env: 'SVC_TEST_SEALING_KEY' },
      projects: projectsWith((project) => {
        if (project.id === 'prj_a')
          project.webhooks = [
            {
              id: 'whe_configured',
              url: receiver.url,
              event_types: ['key.revoked'],
              secret_env: 'SVC_TEST_WEBHOOK_SECRET',
            },
          ];
      }),
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await receiver.stop();
});

it('syncs the configured endpoint, seals its secret in the store, and signs with the configured secret', async () => {
  const api = new Api(gateway.url, await gateway.key('prj_a', ['webhooks:admin']));
  const listed = await api.get('/svc/v1/webhook-endpoints');
  expect(listed.body.data).toEqual([
    expect.objectContaining({
      id: 'whe_configured',
      source: 'config',
      status: 'active',
      event_types: ['key.revoked'],
    }),
  ]);
  const stored = await gateway.store.webhooks.getEndpoint('prj_a', 'whe_configured');
  expect(stored!.secret).toMatch(/^sealed:v1:/);
  expect(stored!.secret).not.toContain(SECRET);
  const event = newEvent('prj_a', 'key_x', 'key.revoked');
  await appendEvents(gateway.store, [newEvent('prj_a', 'run_ignored', 'run.depleted'), event]);
  await waitFor(() => receiver.requests.length >= 1, 10_000, 'the delivery');
  const [request] = receiver.requests;
  expect(request!.headers['svc-event-id']).toBe(event.id);
  expect(
    verifySignature(
      String(request!.headers['svc-signature']),
      request!.body,
      SECRET,
      Math.floor(Date.now() / 1000),
    ),
  ).toBe(true);
});
