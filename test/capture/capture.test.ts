/**
 * Body capture end to end over HTTP (simulated upstreams, SQLite, local objects folder): with
 * capture on, a model call's request body as the client sent it and its response as the client
 * received it (JSON, or a stream's SSE text) are readable with captures:read at
 * GET /svc/v1/attempts/{id}/capture, sealed at rest, cut and flagged past max_body_bytes, shared by
 * every attempt of a fallback call, absent from logs; with capture off nothing is stored. The
 * scope is required; another Project's attempt and an unknown id answer the same 404.
 */
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeOfTimeOrderedId } from '../../src/lib/ids.js';
import { expectSvcError } from '../governance/support.js';
import { messageBody } from '../messages/support.js';
import { call } from '../support/gateway.js';
import { messagesHeaders } from '../support/simulated-gateway.js';
import type { SimulatorWorld } from '../support/simulator-world.js';
import { awaitCapture, captureObjects, EMBEDDINGS_ALIAS, getCapture, startCaptureWorld } from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';
const HOUR_MS = 3_600_000;

interface Sent {
  status: number;
  text: string;
  attemptId: string;
  contentType: string | null;
}

async function post(
  world: SimulatorWorld,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<Sent> {
  const response = await fetch(`${world.gateway.url}${path}`, { method: 'POST', headers, body });
  const text = await response.text();
  return {
    status: response.status,
    text,
    attemptId: response.headers.get('svc-attempt-id') ?? '',
    contentType: response.headers.get('content-type'),
  };
}

/** A Messages body with a marker in its prompt, written with unusual spacing (kept exactly). */
function markedMessages(marker: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    messageBody(DIRECT, { messages: [{ role: 'user', content: `Please repeat ${marker}` }], ...extra }),
    null,
    3,
  );
}

function expectNoMarker(world: SimulatorWorld, marker: string): void {
  const logs = world.gateway.logs.join('');
  expect(logs.length).toBeGreaterThan(0);
  expect(logs.includes(marker)).toBe(false);
}

describe('capture on (prj_a: defaults; prj_b: 64-byte bodies)', () => {
  let world: SimulatorWorld;
  let key: string;
  let keyB: string;
  beforeAll(async () => {
    world = await startCaptureWorld({
      capture: { enabled: true },
      captureB: { enabled: true, max_body_bytes: 64, retention_hours: 2 },
    });
    key = await world.gateway.key('prj_a');
    keyB = await world.gateway.key('prj_b');
  });
  afterAll(async () => world?.close());

  it('a Messages call: the request exactly as sent and the response exactly as received, sealed at rest', async () => {
    const marker = `marker-${randomUUID()}`;
    const body = markedMessages(marker);
    const sent = await post(world, '/v1/messages', messagesHeaders(key), body);
    expect(sent.status, sent.text).toBe(200);
    const capture = (await awaitCapture(world.gateway.url, key, sent.attemptId)).body;
    const createdMs = timeOfTimeOrderedId(sent.attemptId)!;
    expect(capture).toEqual({
      object: 'attempt.capture',
      attempt_id: sent.attemptId,
      call_attempt_ids: [sent.attemptId],
      captured_at: expect.any(String),
      expires_at: new Date(createdMs + 168 * HOUR_MS).toISOString(),
      request: {
        content_type: 'application/json',
        encoding: 'utf8',
        body,
        bytes: Buffer.byteLength(body),
        truncated: false,
      },
      response: {
        status: 200,
        content_type: sent.contentType,
        encoding: 'utf8',
        body: sent.text,
        bytes: Buffer.byteLength(sent.text),
        truncated: false,
      },
    });
    expect(Date.parse(capture.captured_at)).toBeGreaterThanOrEqual(createdMs);
    // The OpenAPI document's schema describes the answer.
    const document = (await call(world.gateway.url, 'GET', '/svc/v1/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
    const validate = ajv.getSchema('openapi#/components/schemas/AttemptCapture')!;
    expect(validate(capture), JSON.stringify(validate.errors)).toBe(true);
    // Stored under a key that carries the attempt's UTC date, encrypted: the prompt is not on disk.
    const stored = captureObjects(world);
    const date = new Date(createdMs).toISOString().slice(0, 10).replace(/-/g, '');
    const name = [...stored.keys()].find((entry) => entry.endsWith(sent.attemptId));
    expect(name).toMatch(new RegExp(`^cap_${date}T\\d{6}Z_${sent.attemptId}$`));
    for (const bytes of stored.values()) expect(bytes.includes(Buffer.from(marker))).toBe(false);
    expectNoMarker(world, marker);
  });

  it('a streamed Messages call: the server-sent events as the client received them', async () => {
    const marker = `marker-${randomUUID()}`;
    const body = markedMessages(marker, { stream: true });
    const sent = await post(world, '/v1/messages', messagesHeaders(key), body);
    expect(sent.status).toBe(200);
    expect(sent.text).toContain('event: message_stop');
    const capture = (await awaitCapture(world.gateway.url, key, sent.attemptId)).body;
    expect(capture.request.body).toBe(body);
    expect(capture.response).toEqual({
      status: 200,
      content_type: 'text/event-stream; charset=utf-8',
      encoding: 'utf8',
      body: sent.text,
      bytes: Buffer.byteLength(sent.text),
      truncated: false,
    });
    expectNoMarker(world, marker);
  });

  it('chat completions (streamed and not) and embeddings are captured the same way', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    for (const stream of [false, true]) {
      const marker = `marker-${randomUUID()}`;
      const body = JSON.stringify({
        model: 'm:vendorb.chat-embeddings.v1',
        max_tokens: 32,
        stream,
        messages: [{ role: 'user', content: `Echo ${marker}` }],
      });
      const sent = await post(world, '/v1/chat/completions', headers, body);
      expect(sent.status, sent.text).toBe(200);
      const capture = (await awaitCapture(world.gateway.url, key, sent.attemptId)).body;
      expect(capture.request.body).toBe(body);
      expect(capture.response.body).toBe(sent.text);
      expect(capture.response.truncated).toBe(false);
      expectNoMarker(world, marker);
    }
    const marker = `marker-${randomUUID()}`;
    const body = JSON.stringify({ model: EMBEDDINGS_ALIAS, input: `Embed ${marker}` });
    const sent = await post(world, '/v1/embeddings', headers, body);
    expect(sent.status, sent.text).toBe(200);
    const capture = (await awaitCapture(world.gateway.url, key, sent.attemptId)).body;
    expect(capture.request).toMatchObject({ body, truncated: false });
    expect(capture.response).toMatchObject({ status: 200, body: sent.text, truncated: false });
    expectNoMarker(world, marker);
  });

  it('speech: the audio as base64; a transcription: the upload is recorded by length, not kept', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({
      model: 'tts-1',
      voice: 'alloy',
      input: 'Hello, wörld',
      response_format: 'opus',
    });
    const response = await fetch(`${world.gateway.url}/v1/audio/speech`, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    const audio = Buffer.from(await response.arrayBuffer());
    const attemptId = response.headers.get('svc-attempt-id')!;
    const speech = (await awaitCapture(world.gateway.url, key, attemptId)).body;
    expect(speech.request.body).toBe(body);
    expect(speech.response).toEqual({
      status: 200,
      content_type: 'audio/ogg',
      encoding: 'base64',
      body: audio.toString('base64'),
      bytes: audio.length,
      truncated: false,
    });

    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([Buffer.alloc(4000)]), 'clip.wav');
    const transcribed = await fetch(`${world.gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const text = await transcribed.text();
    expect(transcribed.status, text).toBe(200);
    const upload = (await awaitCapture(world.gateway.url, key, transcribed.headers.get('svc-attempt-id')!))
      .body;
    expect(upload.request).toMatchObject({ body: '', truncated: true });
    expect(upload.request.content_type).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload.request.bytes).toBeGreaterThan(4000);
    expect(upload.response).toMatchObject({ status: 200, body: text, truncated: false });
  });

  it('a failed call is captured with the error the client received', async () => {
    world.sim.setBehaviour({ status: 400 }, { model: 'up-vendora.messages.2023-06-01' });
    try {
      const body = markedMessages(`marker-${randomUUID()}`);
      const sent = await post(world, '/v1/messages', messagesHeaders(key), body);
      expect(sent.status).toBeGreaterThanOrEqual(400);
      const attempts = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 10_000 });
      const attemptId = attempts.at(-1)!.attemptId;
      const capture = (await awaitCapture(world.gateway.url, key, attemptId)).body;
      expect(capture.response).toMatchObject({ status: sent.status, body: sent.text });
    } finally {
      world.sim.reset();
    }
  });

  it('a fallback call: one capture, found from every attempt of the call', async () => {
    world.sim.setBehaviour({ status: 500 }, { model: 'up-first' });
    try {
      const body = JSON.stringify(messageBody('fallback'));
      const sent = await post(world, '/v1/messages', messagesHeaders(key), body);
      expect(sent.status, sent.text).toBe(200);
      const audit = await world.gateway.store.listAudit({ projectId: 'prj_a', limit: 10_000 });
      const [first, second] = audit.slice(-2).map((entry) => entry.attemptId);
      expect(second).toBe(sent.attemptId);
      const fromFirst = (await awaitCapture(world.gateway.url, key, first!)).body;
      const fromSecond = (await awaitCapture(world.gateway.url, key, second!)).body;
      expect(fromFirst.call_attempt_ids).toEqual([first, second]);
      expect(fromFirst.attempt_id).toBe(first);
      expect(fromSecond.attempt_id).toBe(second);
      expect({ ...fromFirst, attempt_id: null, expires_at: null }).toEqual({
        ...fromSecond,
        attempt_id: null,
        expires_at: null,
      });
      expect(fromSecond.response.body).toBe(sent.text);
    } finally {
      world.sim.reset();
    }
  });

  it('bodies longer than max_body_bytes are kept cut and flagged truncated', async () => {
    const body = markedMessages(`marker-${randomUUID()}`);
    const sent = await post(world, '/v1/messages', messagesHeaders(keyB), body);
    expect(sent.status).toBe(200);
    const capture = (await awaitCapture(world.gateway.url, keyB, sent.attemptId)).body;
    expect(capture.request).toEqual({
      content_type: 'application/json',
      encoding: 'utf8',
      body: body.slice(0, 64),
      bytes: Buffer.byteLength(body),
      truncated: true,
    });
    expect(capture.response.truncated).toBe(true);
    expect(capture.response.bytes).toBe(Buffer.byteLength(sent.text));
    expect(capture.response.body).toBe(sent.text.slice(0, 64));
    expect(Date.parse(capture.expires_at)).toBe(timeOfTimeOrderedId(sent.attemptId)! + 2 * HOUR_MS);
  });

  it('the scope captures:read is required; another Project and unknown ids answer the same 404', async () => {
    const sent = await post(world, '/v1/messages', messagesHeaders(key), markedMessages('x'));
    await awaitCapture(world.gateway.url, key, sent.attemptId);
    const noScope = await world.gateway.key('prj_a', ['governance:read', 'inference']);
    expectSvcError(
      await getCapture(world.gateway.url, noScope, sent.attemptId),
      403,
      'gateway_key_scope_denied',
    );
    const otherProject = await getCapture(world.gateway.url, keyB, sent.attemptId);
    expectSvcError(otherProject, 404, 'capture_not_found');
    const unknown = await getCapture(world.gateway.url, key, `att_${'0'.repeat(10)}${'Z'.repeat(16)}`);
    expectSvcError(unknown, 404, 'capture_not_found');
    expect(otherProject.body.error.message.replace(sent.attemptId, 'ID')).toBe(
      unknown.body.error.message.replace(/att_\w+/, 'ID'),
    );
    expectSvcError(await getCapture(world.gateway.url, key, 'not-an-attempt'), 404, 'capture_not_found');
    // The keys API grants the scope like any other.
    const created = await call(world.gateway.url, 'POST', '/svc/v1/keys', {
      key,
      idempotencyKey: randomUUID(),
      body: { scopes: ['captures:read'], label: 'capture reader' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.scopes).toEqual(['captures:read']);
    const readOnly = await getCapture(world.gateway.url, created.body.secret, sent.attemptId);
    expect(readOnly.status).toBe(200);
    expect(readOnly.headers.get('cache-control')).toBe('no-store');
    expectSvcError(
      await getCapture(world.gateway.url, 'gw_wrong', sent.attemptId),
      401,
      'authentication_failed',
    );
  });

  it("the attempt's detail says whether its bodies are kept and until when, never the bodies", async () => {
    const marker = `marker-${randomUUID()}`;
    const sent = await post(world, '/v1/messages', messagesHeaders(key), markedMessages(marker));
    const capture = (await awaitCapture(world.gateway.url, key, sent.attemptId)).body;
    const detail = await call(world.gateway.url, 'GET', `/svc/v1/attempts/${sent.attemptId}`, { key });
    expect(detail.status).toBe(200);
    // The OpenAPI document's schema of the detail describes the field.
    const document = (await call(world.gateway.url, 'GET', '/svc/v1/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
    const validDetail = ajv.getSchema('openapi#/components/schemas/AttemptDetail')!;
    expect(validDetail(detail.body), JSON.stringify(validDetail.errors)).toBe(true);
    expect(detail.body.capture).toEqual({ available: true, expires_at: capture.expires_at });
    expect(JSON.stringify(detail.body)).not.toContain(marker);
  });

  it('requests refused before any attempt leave no capture', async () => {
    const before = captureObjects(world).size;
    const refused = await post(world, '/v1/messages', messagesHeaders(key), '{"model": 1}');
    expect(refused.status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(captureObjects(world).size).toBe(before);
  });
});

describe('capture off (the default)', () => {
  let world: SimulatorWorld;
  let key: string;
  beforeAll(async () => {
    world = await startCaptureWorld();
    key = await world.gateway.key('prj_a');
  });
  afterAll(async () => world?.close());

  it('nothing is stored and the capture endpoint answers 404', async () => {
    const marker = `marker-${randomUUID()}`;
    for (const stream of [false, true]) {
      const sent = await post(
        world,
        '/v1/messages',
        messagesHeaders(key),
        markedMessages(marker, { stream }),
      );
      expect(sent.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expectSvcError(await getCapture(world.gateway.url, key, sent.attemptId), 404, 'capture_not_found');
      const detail = await call(world.gateway.url, 'GET', `/svc/v1/attempts/${sent.attemptId}`, { key });
      expect(detail.body.capture).toEqual({ available: false, expires_at: null });
    }
    expect(captureObjects(world).size).toBe(0);
    expectNoMarker(world, marker);
  });
});
