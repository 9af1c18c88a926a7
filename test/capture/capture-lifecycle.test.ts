/**
 * Body capture over time and failure: captures expire after retention_hours (the capture endpoint
 * answers 404 at once; the existing object sweep job deletes them, captures still in retention
 * stay); the configuration refuses capture without a sealing key; on an S3 bucket (s3rver) captures
 * are written and read, and while the bucket is down calls still succeed, the capture is dropped
 * and counted in svc_capture_dropped_total{reason="object_store"}, and no body reaches the logs or
 * the metrics.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ManualClock } from '../../src/lib/clock.js';
import { timeOfTimeOrderedId } from '../../src/lib/ids.js';
import { createObservability } from '../../src/observability/observability.js';
import { expectSvcError } from '../governance/support.js';
import { eventually, messageBody } from '../messages/support.js';
import { scrapeListener, total } from '../observability/support.js';
import { baseConfig } from '../support/gateway.js';
import { startTestS3, type TestS3 } from '../support/s3-server.js';
import { messagesHeaders } from '../support/simulated-gateway.js';
import type { SimulatorWorld } from '../support/simulator-world.js';
import {
  awaitCapture,
  captureObjects,
  captureProjects,
  getCapture,
  SEALING_KEY,
  startCaptureWorld,
} from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';

async function postMarked(world: SimulatorWorld, key: string, marker: string, stream = false) {
  const body = JSON.stringify(
    messageBody(DIRECT, { stream, messages: [{ role: 'user', content: `Repeat ${marker}` }] }),
  );
  const started = performance.now();
  const response = await fetch(`${world.gateway.url}/v1/messages`, {
    method: 'POST',
    headers: messagesHeaders(key),
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    ms: performance.now() - started,
    attemptId: response.headers.get('svc-attempt-id')!,
  };
}

describe('retention: expired captures read as absent and the object sweep deletes them', () => {
  const clock = new ManualClock(Date.now());
  let world: SimulatorWorld;
  let key: string;
  beforeAll(async () => {
    world = await startCaptureWorld({
      clock,
      capture: { enabled: true, retention_hours: 1 },
      config: {
        objects: {
          sealing_key_env: 'SVC_TEST_SEALING_KEY',
          sweep_interval_seconds: 1,
          orphan_grace_seconds: 60,
        },
        jobs: { poll_interval_ms: 20 },
      },
    });
    key = await world.gateway.key('prj_a');
  });
  afterAll(async () => world?.close());

  it('past retention_hours: 404 at once, deleted by the sweep job; a capture within retention stays', async () => {
    const old = await postMarked(world, key, 'old');
    expect(old.status).toBe(200);
    const before = (await awaitCapture(world.gateway.url, key, old.attemptId)).body;
    expect(Date.parse(before.expires_at) - timeOfTimeOrderedId(old.attemptId)!).toBe(3_600_000);
    const oldObject = [...captureObjects(world).keys()].find((name) => name.endsWith(old.attemptId));
    expect(oldObject).toBeDefined();

    clock.advance(2 * 3_600_000);
    expectSvcError(await getCapture(world.gateway.url, key, old.attemptId), 404, 'capture_not_found');
    const fresh = await postMarked(world, key, 'fresh');
    await awaitCapture(world.gateway.url, key, fresh.attemptId);
    await eventually(
      () => (captureObjects(world).has(oldObject!) ? undefined : true),
      10_000,
      'the sweep to delete the expired capture',
    );
    expect([...captureObjects(world).keys()].some((name) => name.endsWith(fresh.attemptId))).toBe(true);
    expect((await getCapture(world.gateway.url, key, fresh.attemptId)).status).toBe(200);
  });
});

describe('configuration', () => {
  it('refuses capture without a sealing key, naming the field', () => {
    const raw = { ...baseConfig(), projects: captureProjects({ enabled: true }) };
    expect(() => parseConfig(raw, 'test-config', {})).toThrow(
      /projects\/0\/capture\/enabled: body capture keeps sealed objects; set objects\.sealing_key_env/,
    );
    const off = { ...baseConfig(), projects: captureProjects({ enabled: false }) };
    expect(parseConfig(off, 'test-config', {}).projects[0]!.capture).toEqual({
      enabled: false,
      retention_hours: 168,
      max_body_bytes: 1_048_576,
    });
    for (const bad of [{ max_body_bytes: 0 }, { retention_hours: 0 }, { enabled: 'yes' }, { other: 1 }]) {
      const raw = {
        ...baseConfig(),
        objects: { sealing_key_env: 'K' },
        projects: captureProjects({ enabled: true, ...bad }),
      };
      expect(() => parseConfig(raw, 'test-config', { K: SEALING_KEY })).toThrow(/capture/);
    }
  });
});

describe('an S3 bucket (s3rver): captures written and read; the bucket down drops captures, never calls', () => {
  let s3: TestS3;
  let world: SimulatorWorld;
  let key: string;
  const observability = createObservability({ metrics: true, tracing: false });
  beforeAll(async () => {
    s3 = await startTestS3();
    world = await startCaptureWorld({
      observability,
      capture: { enabled: true },
      environment: { CAPTURE_S3_KEY_ID: s3.accessKeyId, CAPTURE_S3_SECRET: s3.secretAccessKey },
      objects: {
        kind: 's3',
        sealing_key_env: 'SVC_TEST_SEALING_KEY',
        s3: {
          bucket: s3.bucket,
          endpoint: s3.endpoint,
          prefix: 'capture/',
          force_path_style: true,
          access_key_id_env: 'CAPTURE_S3_KEY_ID',
          secret_access_key_env: 'CAPTURE_S3_SECRET',
        },
      },
    });
    key = await world.gateway.key('prj_a');
  });
  afterAll(async () => {
    await world?.close();
    await s3?.stop();
  });

  it('round trip on S3, then an outage: the call succeeds, the capture is dropped and counted', async () => {
    const marker = `marker-${randomUUID()}`;
    const kept = await postMarked(world, key, marker, true);
    expect(kept.status).toBe(200);
    const capture = (await awaitCapture(world.gateway.url, key, kept.attemptId)).body;
    expect(capture.response.body).toBe(kept.text);
    expect(capture.request.body).toContain(marker);
    const before = await scrapeListener(observability.metrics!);
    expect(total(before, 'svc_captures_written_total')).toBeGreaterThanOrEqual(1);
    expect(total(before, 'svc_capture_dropped_total')).toBe(0);

    await s3.down();
    let down = true;
    try {
      const lost = await postMarked(world, key, marker);
      expect(lost.status, lost.text).toBe(200);
      expect(lost.text).toContain('"type":"message"');
      await eventually(
        async () =>
          total(await scrapeListener(observability.metrics!), 'svc_capture_dropped_total', {
            reason: 'object_store',
          }) === 1
            ? true
            : undefined,
        15_000,
        'the dropped capture to be counted',
      );
      // Reading while the bucket is down: 503 in the svc dialect, never a 500.
      expectSvcError(
        await getCapture(world.gateway.url, key, kept.attemptId),
        503,
        'object_store_unavailable',
      );
      await s3.up();
      down = false;
      expectSvcError(await getCapture(world.gateway.url, key, lost.attemptId), 404, 'capture_not_found');
      expect((await getCapture(world.gateway.url, key, kept.attemptId)).status).toBe(200);
    } finally {
      if (down) await s3.up();
    }
    const logs = world.gateway.logs.join('');
    expect(logs).toContain('capture dropped');
    expect(logs.includes(marker)).toBe(false);
    expect((await observability.metrics!.exposition()).includes(marker)).toBe(false);
  });
});
