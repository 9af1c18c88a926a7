/**
 * Events written by the real producers (model calls spending a Run's budget, a key
 * revoked, a Work Unit closed) reach a webhook receiver on loopback, signed, each event once after
 * dedupe, with the same envelope GET /svc/v1/events answers. Both stores.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Api, describeEachStore } from '../governance/support.js';
import { call } from '../support/gateway.js';
import {
  messagesHeaders,
  type SimulatedGateway,
  startSimulatedGateway,
} from '../support/simulated-gateway.js';
import { fastWebhooks, Receiver, verifySignature, waitFor } from './support.js';

const MODEL = 'm:vendora.messages.2023-06-01';

describeEachStore('webhooks from the event producers', (kind) => {
  let gateway: SimulatedGateway;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    gateway = await startSimulatedGateway({ store: kind, config: { webhooks: fastWebhooks() } });
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver.stop();
  });

  it("delivers a Run's money events, revocation and closing events with their envelope and a valid signature", async () => {
    const admin = new Api(gateway.url, await gateway.key('prj_a'));
    const created = await admin.post('/svc/v1/webhook-endpoints', { url: receiver.url });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const unit = await admin.createWorkUnit();
    const run = await admin.createRun(unit.id, { budget_micros_usd: 4_000 });
    // Calls attached to the Run until it refuses: its budget fractions are crossed on the way.
    for (let index = 0; index < 40; index++) {
      const result = await call(gateway.url, 'POST', '/v1/messages', {
        headers: messagesHeaders(admin.key, { 'x-svc-run-id': run.id }),
        body: { model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Hello there' }] },
      });
      if (result.status === 403) break;
      expect(result.status, JSON.stringify(result.body)).toBe(200);
    }
    const victim = await admin.post('/svc/v1/keys', { scopes: ['inference'] });
    await admin.post(`/svc/v1/keys/${victim.body.id}/revoke`, {});
    await admin.closeWorkUnit(unit.id);
    const listed = await admin.get('/svc/v1/events?limit=100');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const events = listed.body.data as Array<{ id: string; type: string }>;
    const types = new Set(events.map((event) => event.type));
    // The Run's money events (a threshold or depletion: docs/events.md says which fires when).
    expect([...types].some((type) => type.startsWith('run.'))).toBe(true);
    expect(types).toContain('key.revoked');
    expect(types).toContain('work_unit.closed');
    await waitFor(
      () => events.every((event) => receiver.eventIds().includes(event.id)),
      20_000,
      'every listed event at the receiver',
    );
    const now = Math.floor(Date.now() / 1000);
    for (const event of events) {
      const request = receiver.requests.find((candidate) => candidate.headers['svc-event-id'] === event.id)!;
      expect(JSON.parse(request.body)).toEqual(event);
      expect(
        verifySignature(String(request.headers['svc-signature']), request.body, created.body.secret, now),
      ).toBe(true);
    }
    expect(new Set(receiver.eventIds()).size).toBe(events.length);
  }, 60_000);
});
