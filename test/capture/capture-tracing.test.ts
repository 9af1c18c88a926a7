/**
 * With capture on and tracing on (every request sampled, an in-memory exporter), the bodies of a
 * captured call appear in no span: names, attributes, events, status.
 */
import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObservability } from '../../src/observability/observability.js';
import { type RunningTracing, startTracing } from '../../src/observability/tracing-sdk.js';
import { messageBody } from '../messages/support.js';
import { messagesHeaders } from '../support/simulated-gateway.js';
import type { SimulatorWorld } from '../support/simulator-world.js';
import { awaitCapture, startCaptureWorld } from './support.js';

const exporter = new InMemorySpanExporter();
let tracing: RunningTracing;
let world: SimulatorWorld;
let key: string;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'svc-test', sampleRatio: 1, exporter });
  world = await startCaptureWorld({
    capture: { enabled: true },
    observability: createObservability({ metrics: true, tracing: true }),
  });
  key = await world.gateway.key('prj_a');
});
afterAll(async () => {
  await world?.close();
  await tracing?.shutdown();
});

describe('capture and tracing', () => {
  it('no span carries a captured body', async () => {
    const marker = `marker-${randomUUID()}`;
    for (const stream of [false, true]) {
      const body = JSON.stringify(
        messageBody('m:vendora.messages.2023-06-01', {
          stream,
          messages: [{ role: 'user', content: `Repeat ${marker}` }],
        }),
      );
      const response = await fetch(`${world.gateway.url}/v1/messages`, {
        method: 'POST',
        headers: messagesHeaders(key),
        body,
      });
      expect(response.status).toBe(200);
      await response.text();
      const capture = await awaitCapture(world.gateway.url, key, response.headers.get('svc-attempt-id')!);
      expect(capture.body.request.body).toContain(marker);
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(0);
    const text = JSON.stringify(
      spans.map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
      })),
    );
    expect(text).toContain('/svc/v1/attempts');
    expect(text.includes(marker)).toBe(false);
  });
});
