/**
 * Webhook delivery end to end on both stores, with a real receiver on loopback: signatures checked
 * by the reference verifier (support.ts), rotation overlap, a receiver answering 500, hanging past
 * the timeout and down for a while (every event delivered; after dedupe on the event id each
 * exactly once), order per resource, the per-endpoint concurrency bound, redelivery of a failed
 * delivery, the attempt history over the API and the metrics.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createObservability } from '../../src/observability/observability.js';
import { Api, describeEachStore, expectSvcError, type Json } from '../governance/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { appendEvents, fastWebhooks, newEvent, Receiver, verifySignature, waitFor } from './support.js';

describeEachStore('webhook delivery', (kind) => {
  let gateway: TestGateway;
  let api: Api;
  const observability = createObservability({ metrics: true, tracing: false });
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway({
      store: kind,
      observability,
      config: {
        webhooks: fastWebhooks({ retry_window_seconds: 6, max_concurrent_per_endpoint: 2 }),
      },
    });
    api = new Api(gateway.url, await gateway.key('prj_a', ['webhooks:admin']));
  });
  afterAll(async () => {
    await gateway?.close();
    for (const receiver of receivers) await receiver.stop();
  });

  async function receiver(): Promise<Receiver> {
    const started = new Receiver();
    await started.start();
    receivers.push(started);
    return started;
  }

  async function endpoint(url: string, body: Json = {}): Promise<Json> {
    const created = await api.post('/svc/v1/webhook-endpoints', { url, ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  it('signs each delivery so the reference verifier accepts it, and sends the documented headers and envelope', async () => {
    const target = await receiver();
    const created = await endpoint(target.url, { event_types: ['run.depleted'] });
    const event = newEvent('prj_a', 'run_sig', 'run.depleted');
    await appendEvents(gateway.store, [newEvent('prj_a', 'run_sig', 'outcome.reported'), event]);
    await waitFor(() => target.requests.length >= 1, 10_000, 'the delivery');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.requests).toHaveLength(1); // the other type is not subscribed
    const [request] = target.requests;
    const now = Math.floor(Date.now() / 1000);
    const header = String(request!.headers['svc-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, request!.body, created.secret, now)).toBe(true);
    expect(verifySignature(header, `${request!.body} `, created.secret, now)).toBe(false);
    expect(verifySignature(header, request!.body, `${created.secret}x`, now)).toBe(false);
    expect(verifySignature(header, request!.body, created.secret, now + 3600)).toBe(false);
    expect(request!.headers['svc-event-id']).toBe(event.id);
    expect(request!.headers['svc-event-type']).toBe('run.depleted');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(String(request!.headers['user-agent'])).toMatch(/^svc-gateway-webhooks\//);
    expect(JSON.parse(request!.body)).toEqual({
      id: event.id,
      object: 'event',
      type: 'run.depleted',
      created_at: event.occurredAt,
      project_id: 'prj_a',
      resource: { type: 'run', id: 'run_sig' },
      data: { run_id: 'run_sig' },
    });
  });

  it('signs with both secrets during a rotation overlap, then with the new one only', async () => {
    const target = await receiver();
    const created = await endpoint(target.url);
    const rotated = await api.post(`/svc/v1/webhook-endpoints/${created.id}/rotate-secret`, {
      overlap_seconds: 2,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(rotated.body.previous_secret_expires_at).not.toBeNull();
    await appendEvents(gateway.store, [newEvent('prj_a', 'run_rot1')]);
    await waitFor(() => target.requests.length >= 1, 10_000, 'the delivery in the overlap');
    const during = target.requests[0]!;
    const now = () => Math.floor(Date.now() / 1000);
    expect(String(during.headers['svc-signature']).match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(String(during.headers['svc-signature']), during.body, created.secret, now())).toBe(
      true,
    );
    expect(
      verifySignature(String(during.headers['svc-signature']), during.body, rotated.body.secret, now()),
    ).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2200));
    await appendEvents(gateway.store, [newEvent('prj_a', 'run_rot2')]);
    await waitFor(() => target.requests.length >= 2, 10_000, 'the delivery after the overlap');
    const after = target.requests[1]!;
    expect(
      verifySignature(String(after.headers['svc-signature']), after.body, rotated.body.secret, now()),
    ).toBe(true);
    expect(verifySignature(String(after.headers['svc-signature']), after.body, created.secret, now())).toBe(
      false,
    );
  });

  it('delivers every event to a receiver that answers 500, hangs past the timeout and is down for a while, in order per resource', async () => {
    const target = await receiver();
    await endpoint(target.url);
    const port = target.port;
    let calls = 0;
    // First 500s, then a hang longer than the 400 ms timeout, then the receiver goes down and up.
    target.behaviour = () => {
      calls++;
      if (calls <= 3) return { kind: 'status', status: 500 };
      if (calls <= 5) return { kind: 'hang' };
      return { kind: 'status', status: 200 };
    };
    const events = ['run_x', 'run_y', 'run_z'].flatMap((run) =>
      [1, 2, 3, 4].map(() => newEvent('prj_a', run)),
    );
    await appendEvents(gateway.store, events.slice(0, 6));
    await waitFor(() => calls >= 6, 15_000, 'the failing answers');
    await target.stop();
    await appendEvents(gateway.store, events.slice(6));
    await new Promise((resolve) => setTimeout(resolve, 800));
    await target.start(port);
    await waitFor(
      () => new Set(target.eventIds()).size >= events.length,
      20_000,
      'every event after the receiver recovered',
    );
    const unique = [...new Set(target.eventIds())];
    expect(unique.sort()).toEqual(events.map((event) => event.id).sort());
    // Per resource, the first arrival of each event follows the order the events were written.
    const firstArrival = new Map<string, number>();
    target.eventIds().forEach((id, index) => {
      if (!firstArrival.has(id)) firstArrival.set(id, index);
    });
    for (const run of ['run_x', 'run_y', 'run_z']) {
      const ordered = events
        .filter((event) => event.resourceId === run)
        .map((event) => firstArrival.get(event.id)!);
      expect(ordered).toEqual([...ordered].sort((a, b) => a - b));
    }
  });

  it('keeps at most max_concurrent_per_endpoint deliveries in flight to one endpoint', async () => {
    const target = await receiver();
    target.answerDelayMs = 150;
    await endpoint(target.url);
    const events = Array.from({ length: 12 }, (_, index) => newEvent('prj_a', `run_c${index}`));
    await appendEvents(gateway.store, events);
    await waitFor(() => new Set(target.eventIds()).size >= events.length, 20_000, 'all deliveries');
    expect(target.maxInFlight).toBeLessThanOrEqual(2);
    expect(target.maxInFlight).toBe(2);
  });

  it('fails a delivery after its retry window, shows its attempts, and redelivers it on request', async () => {
    const target = await receiver();
    target.behaviour = () => ({ kind: 'status', status: 503 });
    const created = await endpoint(target.url);
    const event = newEvent('prj_a', 'run_failed');
    await appendEvents(gateway.store, [event]);
    let failed: Json | undefined;
    await waitFor(
      async () => {
        const page = await api.get(`/svc/v1/webhook-endpoints/${created.id}/deliveries`);
        failed = page.body.data?.find((delivery: Json) => delivery.status === 'failed');
        return failed !== undefined;
      },
      20_000,
      'the delivery to fail',
    );
    expect(failed!.event_id).toBe(event.id);
    expect(failed!.attempts).toBeGreaterThanOrEqual(2);
    expect(failed!.last_status_code).toBe(503);
    expect(failed!.last_error).toBe('answered HTTP 503');
    expect(failed!.next_attempt_at).toBeNull();
    expect(failed!.recent_attempts.length).toBeGreaterThanOrEqual(2);
    expect(failed!.recent_attempts.length).toBeLessThanOrEqual(10);
    expect(failed!.recent_attempts[0]).toMatchObject({ status_code: 503, error: 'answered HTTP 503' });
    const before = target.requests.length;
    target.behaviour = () => ({ kind: 'status', status: 204 });
    const redelivered = await api.post(
      `/svc/v1/webhook-endpoints/${created.id}/deliveries/${failed!.id}/redeliver`,
      {},
    );
    expect(redelivered.status, JSON.stringify(redelivered.body)).toBe(201);
    expect(redelivered.body.status).toBe('pending');
    await waitFor(() => target.requests.length > before, 10_000, 'the redelivery');
    await waitFor(
      async () =>
        (await api.get(`/svc/v1/webhook-endpoints/${created.id}/deliveries/${failed!.id}`)).body.status ===
        'succeeded',
      10_000,
      'the redelivery to succeed',
    );
    const unknown = await api.post(
      `/svc/v1/webhook-endpoints/${created.id}/deliveries/whd_nope/redeliver`,
      {},
    );
    expectSvcError(unknown, 404, 'webhook_delivery_not_found');
  });

  it('exports the outbox depth, attempts by result, finished deliveries and their durations', async () => {
    const text = await observability.metrics!.exposition();
    expect(text).toMatch(/svc_webhook_delivery_attempts_total\{result="success"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_delivery_attempts_total\{result="http_error"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_delivery_attempts_total\{result="timeout"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_delivery_attempts_total\{result="network_error"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_deliveries_total\{result="succeeded"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_deliveries_total\{result="failed"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_delivery_duration_seconds_count\{result="success"\} [1-9]/);
    expect(text).toMatch(/svc_webhook_outbox_depth \d+/);
  });
});
